package arrowio

import (
	"bytes"
	"io"
	"math"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// benchAnswers is n nearest answers as a query's: random references and
// distances.
func benchAnswers(n int) ([]uint32, []float64) {
	ref, metres := make([]uint32, n), make([]float64, n)
	for i := range n {
		ref[i], metres[i] = uint32(i*2654435761)>>16, math.Sqrt(float64(uint32(i*2654435761)))*1.37
	}
	return ref, metres
}

// A 2^24-row nearest answer table to Parquet: today's writer (one core
// encodes) beside the stream writer (row groups encoded side by side),
// given the answers in chunks of 2^20.
func BenchmarkParquetAnswers(b *testing.B) {
	const n = 1 << 24
	ref, metres := benchAnswers(n)
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if err := WriteResults(io.Discard, pointio.FormatParquet, n, func(i int) (uint32, float64) { return ref[i], metres[i] }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("stream", func(b *testing.B) {
		for b.Loop() {
			w, err := NewAnswerWriter(io.Discard, pointio.FormatParquet, stream.KindNearest, 1, StreamOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for lo := 0; lo < n; lo += 1 << 20 {
				a := stream.Answers{Base: lo, N: 1 << 20, Nearest: func(i int) (uint32, float64) { return ref[lo+i], metres[lo+i] }}
				if err := w.Write(a); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// One row group of 2^20 nearest answers encoded by pqarrow's writer (what
// the stream writer runs a core each) beside arrow-go's lower-level
// column writers fed the same columns.
func BenchmarkParquetGroupEncode(b *testing.B) {
	const n = 1 << 20
	ref, metres := benchAnswers(n)
	g := &answerGroup{k: 1}
	g.reset(0)
	g.add(stream.KindNearest, stream.Answers{N: n, Nearest: func(i int) (uint32, float64) { return ref[i], metres[i] }}, 0, n)
	schema := arrow.NewSchema(answerFields(stream.KindNearest), nil)
	p := &parquetAssembler{schema: schema}
	b.Run("pqarrow", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.encode(g.record(stream.KindNearest, schema), &g.enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	var buf bytes.Buffer
	b.Run("column-writers", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			if err := encodeColumns(&buf, schema, g.obs, g.ref, g.metres); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// encodeColumns writes one row group of the nearest answers' columns
// through file.Writer's column writers, with newSink's properties.
func encodeColumns(w io.Writer, schema *arrow.Schema, obs []int64, ref []uint32, metres []float64) error {
	props := answerProps()
	sc, err := pqarrow.ToParquet(schema, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	fw := file.NewParquetWriter(w, sc.Root(), file.WithWriterProps(props))
	rg, err := fw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	cols := []func(cw file.ColumnChunkWriter) error{
		func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(obs, nil, nil)
			return err
		},
		func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(unsafe.Slice((*int32)(unsafe.Pointer(&ref[0])), len(ref)), nil, nil)
			return err
		},
		func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.Float64ColumnChunkWriter).WriteBatch(metres, nil, nil)
			return err
		},
	}
	for _, col := range cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := col(cw); err != nil {
			return err
		}
	}
	if err := rg.Close(); err != nil {
		return err
	}
	return fw.Close()
}
