package arrowio

import (
	"path/filepath"
	"strings"

	"github.com/geoknn/geoknn/pointio"
)

// ParquetMagic starts (and ends) every Parquet file.
const ParquetMagic = "PAR1"

// IsParquet reports whether path names a Parquet file: by its extension
// (.parquet, .geoparquet, .parq) or, with one no format has (none, .dat),
// by its first bytes.
func IsParquet(path string) bool {
	if path == "-" {
		return false
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".geoparquet", ".parq":
		return true
	case ".csv", ".txt", ".geojson", ".json", ".npy", ".npz":
		return false // the text and NumPy formats' own
	}
	return pointio.StartsWith(path, ParquetMagic)
}
