package arrowio

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Columns lists the top-level columns of a Parquet or Arrow IPC file
// (Handles says which) and whether each holds text or numbers that read
// back as text (not binary, such as a GeoParquet geometry, nor nested):
// what knn convert carries beside the points.
func Columns(path string) (names []string, text []bool, err error) {
	var schema *arrow.Schema
	if isIPC(path) {
		f, err := openIPCFile(path)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		_, schema, err = ipcBatches(f)
		if err != nil {
			return nil, nil, inputError(path, "not an Arrow IPC file", err)
		}
	} else {
		rdr, err := openParquetFile(path)
		if err != nil {
			return nil, nil, inputError(path, "not a Parquet file", err)
		}
		defer rdr.Close()
		schema, err = pqarrow.FromParquet(rdr.MetaData().Schema, nil, rdr.MetaData().KeyValueMetadata())
		if err != nil {
			return nil, nil, inputError(path, "unreadable Parquet schema", err)
		}
	}
	for _, fl := range schema.Fields() {
		names = append(names, fl.Name)
		switch fl.Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BOOL,
			arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
			arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
			arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
			text = append(text, true)
		default:
			text = append(text, false)
		}
	}
	return names, text, nil
}
