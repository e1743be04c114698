package arrowio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// GroupRows is how many observations' answers a Parquet row group (an
// Arrow batch) holds, from the first observation on, or a multiple of it
// (k nearest: GroupItems): a part of a Parquet file written apart
// (ParquetPart) begins at a multiple of it.
func GroupRows() int { return parquetGroupItems }

// GroupItems is how many observations a row group of answers of kind
// holds: parquetGroupItems, or for k nearest that divided by the largest
// power of two at most k, so that a group is 1 to 2 times its rows.
// Groups of 2^20 observations' 8 nearest (8 x 2^20 rows, 512 MiB while
// encoded) were encoded four at a time in the memory bound, on 7 cores of
// 32 (2^27 to k=8 Parquet on 2 x H200: 11.4 s, 4.8 GB); in groups of
// 2^20 rows, eight at a time, 9.1 s and 2.0 GB. k answers an observation that are fewer than k (--max-m) leave
// a group short of rows. Every size divides parquetGroupItems, so parts that begin at a
// multiple of GroupRows begin at a group's start whatever the kind.
func GroupItems(kind stream.AnswerKind, k int) int {
	if kind != stream.KindKNearest || k < 2 {
		return parquetGroupItems
	}
	return max(1, parquetGroupItems>>(bits.Len(uint(k))-1))
}

// ParquetPart writes one part of the Parquet file of answers that
// NewAnswerWriter writes: the row groups of the observations from lo on,
// a multiple of GroupRows, byte for byte as the whole file holds them,
// without the file's magic and footer. An MPI job's ranks each write
// their part at its offset in one file; Meta is the part's row groups'
// metadata, and FinishParquet writes the magic and the footer of every
// part's groups.
type ParquetPart struct {
	*answerBatches
	partMeta
}

// partMeta is a part's assembler: its length and its row groups'
// metadata.
type partMeta struct{ asm *parquetAssembler }

// newPartMeta turns o's assembler into a part's.
func newPartMeta(o ordered) partMeta {
	asm := o.out.(*parquetAssembler)
	// Offsets as if the part followed the magic; Meta moves them.
	asm.started, asm.at, asm.part = true, 4, true
	return partMeta{asm}
}

// NewParquetPartWriter writes the part of observations lo on (Write's
// chunks in order, Base counted in the whole file) to w; lo is a
// multiple of GroupRows unless the part is empty.
func NewParquetPartWriter(w io.Writer, kind stream.AnswerKind, k, lo int, opts StreamOptions) (*ParquetPart, error) {
	if lo < 0 {
		return nil, fmt.Errorf("parquet: a part from observation %d", lo)
	}
	aw, err := NewAnswerWriter(w, pointio.FormatParquet, kind, k, opts)
	if err != nil {
		return nil, err
	}
	b := aw.(*answerBatches)
	b.next = lo
	return &ParquetPart{answerBatches: b, partMeta: newPartMeta(b.ordered)}, nil
}

// ParquetRowsPart is ParquetPart for the rows NewRowsWriter writes (the
// answers with identifiers): the row groups of a range of items that
// starts at a multiple of GroupRows.
type ParquetRowsPart struct {
	*RowsWriter
	partMeta
}

// NewParquetRowsPartWriter writes a part of the Parquet file of rows of
// fields that NewRowsWriter writes, to w.
func NewParquetRowsPartWriter(w io.Writer, fields []arrow.Field, opts StreamOptions) (*ParquetRowsPart, error) {
	r, err := NewRowsWriter(w, pointio.FormatParquet, fields, opts)
	if err != nil {
		return nil, err
	}
	return &ParquetRowsPart{RowsWriter: r, partMeta: newPartMeta(r.ordered)}, nil
}

// Write writes a chunk of the part's answers.
func (p *ParquetPart) Write(a stream.Answers) error {
	if a.N > 0 && p.group == nil && a.Base%parquetGroupItems != 0 {
		return fmt.Errorf("parquet: a part from observation %d, not a multiple of the %d of a row group", a.Base, parquetGroupItems)
	}
	return p.answerBatches.Write(a)
}

// Len is the bytes written.
func (p partMeta) Len() int64 { return p.asm.at - 4 }

// Meta is the metadata of the part's row groups, after Close, placed at
// file offset at (where the part begins), as thrift bytes for
// FinishParquet; nil for a part of no row group. Call it once.
func (p partMeta) Meta(at int64) ([]byte, error) {
	if p.asm.footer == nil {
		return nil, nil
	}
	moveGroups(p.asm.footer, 0, at-4)
	var b bytes.Buffer
	if _, err := p.asm.footer.WriteTo(&b, nil); err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return b.Bytes(), nil
}

// FinishParquet writes the magic at offset 0 of the Parquet file of
// answers of kind (k a row) whose parts' row groups end at end, and the
// footer after them, of every part's groups: metas are the parts' Meta,
// in the order of their observations. With no group at all it writes
// the library's file of no row groups.
func FinishParquet(f io.WriterAt, end int64, kind stream.AnswerKind, k int, metas [][]byte) error {
	return FinishParquetRows(f, end, answerFields(kind), metas)
}

// FinishParquetRows is FinishParquet for the rows of fields
// (ParquetRowsPart).
func FinishParquetRows(f io.WriterAt, end int64, fields []arrow.Field, metas [][]byte) error {
	footer, err := mergeMetas(metas)
	if err != nil {
		return err
	}
	if footer == nil {
		var b bytes.Buffer
		sink, err := newSink(&b, pointio.FormatParquet, arrow.NewSchema(fields, nil))
		if err == nil {
			err = sink.Close()
		}
		if err == nil {
			_, err = f.WriteAt(b.Bytes(), 0)
		}
		return err
	}
	if _, err := f.WriteAt([]byte(ParquetMagic), 0); err != nil {
		return err
	}
	w := io.NewOffsetWriter(f, end)
	n, err := footer.WriteTo(w, nil)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:], uint32(n))
	copy(tail[4:], ParquetMagic)
	_, err = w.Write(tail[:])
	return err
}

// mergeMetas is the first part's metadata with every later part's row
// groups after its own, numbered on.
func mergeMetas(metas [][]byte) (*metadata.FileMetaData, error) {
	var footer *metadata.FileMetaData
	for _, b := range metas {
		if len(b) == 0 {
			continue
		}
		m, err := metadata.NewFileMetaData(b, nil)
		if err != nil {
			return nil, fmt.Errorf("parquet: a part's metadata: %w", err)
		}
		if footer == nil {
			footer = m
			continue
		}
		for _, rg := range m.RowGroups {
			ordinal := int16(len(footer.RowGroups))
			rg.Ordinal = &ordinal
			footer.RowGroups = append(footer.RowGroups, rg)
			footer.NumRows += rg.NumRows
		}
	}
	return footer, nil
}
