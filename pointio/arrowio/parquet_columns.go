package arrowio

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/geoknn/geoknn/pointio"
	"golang.org/x/sync/errgroup"
)

// encodeGroup encodes rec as one row group of a Parquet file of schema,
// its columns side by side, each into its own buffer of bufs (grown to
// one a column): every column by arrow-go's writer as a one-column file,
// whose column chunk is the bytes the whole file's writer writes for that
// column (pages hold no file offsets), its metadata the whole file's but
// for the offsets, which are moved by the chunk's place in the group. The
// group's metadata is that of a file of the schema holding the group, as
// the writer of the whole file makes it: empty's footer with the group's
// row group, whose sizes are the columns' sums and whose offset is its
// first column's (RowGroupMetaDataBuilder.Finish).
//
// Encoding a group's columns apart multiplies the work a group offers the
// cores by its columns (four for the k nearest) at no cost in memory: a
// k-nearest group is 2^23 rows, and the groups in flight are bounded by
// the memory they hold.
func encodeGroup(rec arrow.RecordBatch, schema *arrow.Schema, bufs *[]bytes.Buffer, empty *emptyFooter) (encoded, error) {
	ncol := int(rec.NumCols())
	if len(*bufs) < ncol {
		*bufs = append(*bufs, make([]bytes.Buffer, ncol-len(*bufs))...)
	}
	cols := make([]encoded, ncol)
	var eg errgroup.Group
	for c := range ncol {
		eg.Go(func() (err error) {
			cols[c], err = encodeColumn(rec, schema.Field(c), c, &(*bufs)[c])
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return encoded{}, err
	}
	meta, err := empty.meta(schema)
	if err != nil {
		return encoded{}, err
	}
	return joinColumns(cols, meta), nil
}

// encodeColumn writes column c of rec, field f, as a one-column file into
// buf and cuts it into its chunk and metadata.
func encodeColumn(rec arrow.RecordBatch, f arrow.Field, c int, buf *bytes.Buffer) (encoded, error) {
	buf.Reset()
	buf.Grow(columnRoom(f, int(rec.NumRows())))
	schema := arrow.NewSchema([]arrow.Field{f}, nil)
	one := array.NewRecordBatch(schema, []arrow.Array{rec.Column(c)}, rec.NumRows())
	defer one.Release()
	sink, err := newSink(buf, pointio.FormatParquet, schema)
	if err != nil {
		return encoded{}, err
	}
	if err := sink.Write(one); err != nil {
		sink.Close()
		return encoded{}, err
	}
	if err := sink.Close(); err != nil {
		return encoded{}, err
	}
	e, err := splitParquet(buf.Bytes())
	if err == nil && len(e.meta.RowGroups) != 1 {
		err = fmt.Errorf("parquet: a column written as %d row groups", len(e.meta.RowGroups))
	}
	return e, err
}

// joinColumns is the row group of the one-column files cols, in order,
// in meta (a file of the whole schema and no row group).
func joinColumns(cols []encoded, meta *metadata.FileMetaData) encoded {
	rg := cols[0].meta.RowGroups[0]
	body := [][]byte{cols[0].body[0]}
	at := int64(len(cols[0].body[0]))
	compressed := *rg.TotalCompressedSize
	for _, col := range cols[1:] {
		moveGroups(col.meta, 0, at)
		crg := col.meta.RowGroups[0]
		rg.Columns = append(rg.Columns, crg.Columns...)
		rg.TotalByteSize += crg.TotalByteSize
		compressed += *crg.TotalCompressedSize
		body = append(body, col.body[0])
		at += int64(len(col.body[0]))
	}
	rg.TotalCompressedSize = &compressed
	meta.RowGroups = append(meta.RowGroups[:0], rg)
	meta.NumRows = rg.NumRows
	return encoded{body: body, meta: meta}
}

// emptyFooter is the serialized footer of a Parquet file of a schema and
// no row group, as the writer of the whole file writes it, made once.
type emptyFooter struct {
	once  sync.Once
	bytes []byte
	err   error
}

// meta is a fresh copy of the footer's metadata (each group's is changed
// by the writer).
func (f *emptyFooter) meta(schema *arrow.Schema) (*metadata.FileMetaData, error) {
	f.once.Do(func() {
		var b bytes.Buffer
		sink, err := newSink(&b, pointio.FormatParquet, schema)
		if err == nil {
			err = sink.Close()
		}
		if err != nil {
			f.err = err
			return
		}
		e, err := splitParquetFooter(b.Bytes())
		f.bytes, f.err = e, err
	})
	if f.err != nil {
		return nil, f.err
	}
	return metadata.NewFileMetaData(f.bytes, nil)
}

// columnRoom is the room made for a column of rows before it is encoded:
// the distances' exact size (uncompressed, newSink), which a buffer grown
// by doubling would copy twice over and overshoot by up to half. The
// other columns compress to a fraction of their width (the obs_index
// deltas of a k-nearest group to 0.07 bits a row), where room made for
// their width would be memory held for nothing, group after group:
// their buffers grow as they fill, once, and are reused.
func columnRoom(f arrow.Field, rows int) int {
	if f.Name == metresField.Name {
		return rows*8 + 1<<16
	}
	return 0
}
