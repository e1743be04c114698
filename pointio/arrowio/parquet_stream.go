package arrowio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// StreamOptions tune the stream writers.
type StreamOptions struct {
	// Workers is how many batches are encoded at once (0: every core).
	Workers int
	// MemoryBytes bounds the batches held at once, copied answers and
	// encodings (0: 1 GiB); at least one batch is held whatever it says.
	MemoryBytes int

	// arrowPages has arrow-go's column writers write the answer columns'
	// Parquet pages (parquetPages's reference, in tests).
	arrowPages bool
}

// NewAnswerWriter writes answers of kind (k a row for KindKNearest) in
// format (pointio.FormatParquet or pointio.FormatArrow) as WriteResults,
// WriteKResults and WriteWithin write them, byte for byte: the same
// batches of GroupItems observations. Parquet row groups are
// encoded side by side, each into buffers of its own (their pages by
// parquetPages, arrow-go's bytes), and written in order, their metadata
// moved to their place in the file (see parquetAssembler); Arrow batches
// are built side by side and written in order.
func NewAnswerWriter(w io.Writer, format string, kind stream.AnswerKind, k int, opts StreamOptions) (stream.AnswerWriter, error) {
	if kind < stream.KindNearest || kind > stream.KindWithinLists || (kind == stream.KindKNearest && k < 1) {
		return nil, fmt.Errorf("write results: answers of kind %d with k %d", kind, k)
	}
	if kind != stream.KindKNearest {
		k = 1
	}
	schema := arrow.NewSchema(answerFields(kind), nil)
	items := GroupItems(kind, k)
	o, err := newOrdered(w, format, schema, opts, items*bytesPerItem(kind, k))
	if err != nil {
		return nil, err
	}
	if asm, ok := o.out.(*parquetAssembler); ok && !opts.arrowPages {
		asm.pages = newParquetPages(schema)
	}
	return &answerBatches{ordered: o, kind: kind, k: k, items: items, schema: schema}, nil
}

// newOrdered is the encoder of batches of schema in format, as many at
// once as cores and opts's memory allow (groupBytes a batch).
func newOrdered(w io.Writer, format string, schema *arrow.Schema, opts StreamOptions, groupBytes int) (ordered, error) {
	var out groupSink
	switch format {
	case pointio.FormatParquet:
		out = &parquetAssembler{w: w, schema: schema}
	case pointio.FormatArrow:
		sink, err := newSink(w, format, schema)
		if err != nil {
			return ordered{}, fmt.Errorf("write results: %w", err)
		}
		out = &arrowBatches{sink: sink}
	default:
		return ordered{}, fmt.Errorf("arrowio writes %s or %s, not %q", pointio.FormatParquet, pointio.FormatArrow, format)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return ordered{out: out, workers: max(1, min(workers, memoryBudget(opts)/groupBytes)), fl: &flusher{}}, nil
}

// memoryBudget is the bytes of batches in flight opts allow (1 GiB by
// default).
func memoryBudget(opts StreamOptions) int {
	if opts.MemoryBytes <= 0 {
		return 1 << 30
	}
	return opts.MemoryBytes
}

// groupSink takes the encoded batches in order.
type groupSink interface {
	// encode runs side by side for several batches, each into its
	// group's scratch.
	encode(rec arrow.RecordBatch, s *encodeScratch) (encoded, error)
	// write takes them in order.
	write(e encoded) error
	close() error
}

// encoded is a batch ready to be written: a record (Arrow) or a row
// group's bytes and metadata (Parquet).
// encodeScratch is the room a batch is encoded into, its group's and
// reused from batch to batch (a group goes round only once its batch is
// written): a buffer a column, and the page writer's column chunks and
// the slices of the body it hands on.
type encodeScratch struct {
	bufs []bytes.Buffer
	cols []columnPages
	body [][]byte
}

type encoded struct {
	rec  arrow.RecordBatch
	body [][]byte // the row group's column chunks, in order
	meta *metadata.FileMetaData
}

// answerBatches gathers the chunks' answers into batches of items
// observations (GroupItems) and has them encoded, workers at once, and
// written in order.
type answerBatches struct {
	ordered
	kind   stream.AnswerKind
	k      int
	items  int
	schema *arrow.Schema
	group  *answerGroup
	next   int
}

func (b *answerBatches) Write(a stream.Answers) error {
	if b.err != nil {
		return b.err
	}
	if err := stream.CheckOrder(&b.next, a); err != nil {
		return err
	}
	for lo := 0; lo < a.N; {
		if b.group == nil {
			b.group = b.take(a.Base+lo, b.k)
		}
		hi, full := min(a.N, lo+b.items-b.group.items), false
		if b.kind == stream.KindWithinLists {
			hi, full = b.group.listRoom(a, lo, hi)
		}
		b.group.add(b.kind, a, lo, hi)
		lo = hi
		if full || b.group.items == b.items {
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush has the group encoded.
func (b *answerBatches) flush() error {
	g := b.group
	b.group = nil
	return b.dispatch(g, func() arrow.RecordBatch { return g.record(b.kind, b.schema) })
}

// Close encodes the last batch, writes the batches in flight and the
// footer.
func (b *answerBatches) Close() error {
	if b.group != nil && b.group.items > 0 {
		if err := b.flush(); err != nil {
			b.Abort()
			return err
		}
	}
	return b.finish()
}

// ordered has batches encoded, workers at once, and written in order by
// its flusher; the groups they were made from go round.
type ordered struct {
	out     groupSink
	workers int
	fl      *flusher
	pending []chan encodeResult
	err     error
}

type encodeResult struct {
	g   *answerGroup
	e   encoded
	err error
}

// take is a spare group, or a new one, for the batch from base on.
func (o *ordered) take(base, k int) *answerGroup {
	g := o.fl.spareGroup()
	g.k = k
	g.reset(base)
	return g
}

// dispatch starts encoding the batch build makes of g, first handing the
// oldest batches in flight to the flusher while workers are. A panic in
// build or the encoding is the batch's error, not the process's end:
// the goroutine is not the caller's, whose recovery cannot reach it.
func (o *ordered) dispatch(g *answerGroup, build func() arrow.RecordBatch) error {
	for len(o.pending) >= o.workers { // the window may have shrunk
		if err := o.writeOldest(); err != nil {
			return err
		}
	}
	done := make(chan encodeResult, 1)
	o.pending = append(o.pending, done)
	go func() {
		r := encodeResult{g: g}
		defer func() {
			if p := recover(); p != nil {
				r = encodeResult{g: g, err: fmt.Errorf("internal error: %v", p)}
			}
			done <- r
		}()
		r.e, r.err = o.out.encode(build(), &g.enc)
	}()
	return nil
}

// writeOldest waits for the oldest batch's encoding and queues it for
// the flusher.
func (o *ordered) writeOldest() error {
	r := <-o.pending[0]
	o.pending = o.pending[1:]
	if r.err == nil {
		r.err = o.fl.err()
	}
	if r.err != nil {
		o.fl.drop(r)
		if o.err == nil {
			o.err = fmt.Errorf("write results: %w", r.err)
		}
		return o.err
	}
	o.fl.send(o.out, r)
	return nil
}

// finish writes the batches in flight and the footer.
func (o *ordered) finish() error {
	for len(o.pending) > 0 {
		if err := o.writeOldest(); err != nil {
			o.Abort()
			return err
		}
	}
	if err := o.fl.wait(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := o.out.close(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// Abort drops the batches in flight without waiting for their encodes:
// a row group of k = 8 answers takes a core most of a second to encode,
// and a signal must end the run within one (#41 W2: 0.6-1.2 s waiting).
// Each encode writes only into its own group's buffers, so it can finish
// into the void; its record is released once it does. The flusher drops
// what it has queued and finishes the write in hand.
func (o *ordered) Abort() {
	pending := o.pending
	o.pending = nil
	if len(pending) > 0 {
		go func() {
			for _, p := range pending {
				o.fl.drop(<-p)
			}
		}()
	}
	o.fl.abort()
}

// arrowBatches writes Arrow IPC batches in order.
type arrowBatches struct{ sink tableSink }

func (a *arrowBatches) encode(rec arrow.RecordBatch, _ *encodeScratch) (encoded, error) {
	return encoded{rec: rec}, nil
}

func (a *arrowBatches) write(e encoded) error {
	defer e.rec.Release()
	return a.sink.Write(e.rec)
}

func (a *arrowBatches) close() error { return a.sink.Close() }

// parquetAssembler writes a Parquet file of row groups encoded apart.
//
// Each row group is encoded on its own, as a one-group file in memory
// would hold it: the answers' groups by the page writer (parquetPages),
// other groups by arrow-go's pqarrow writer with today's properties
// (encodeGroup). Its bytes between the magic and the footer are the
// group's column chunks exactly as one writer of the whole file writes
// them (pages hold no file offsets), and its row group metadata differs
// only in the offsets, which are moved by the group's place in the file,
// and the ordinal. The footer is the first group's, with every group's
// metadata, written as the library writes it (thrift, length, magic):
// the whole file's bytes.
type parquetAssembler struct {
	w       io.Writer
	schema  *arrow.Schema
	at      int64 // bytes written
	footer  *metadata.FileMetaData
	empty   emptyFooter // the footer of a file of the schema and no row
	started bool
	part    bool          // a part of a file (ParquetPart): no magic, no footer
	pages   *parquetPages // writes the groups' pages where it can (answers)
}

// encode encodes a group. A page writer's groups may hold rec's memory
// (the answers' group's, which goes round only once written).
func (p *parquetAssembler) encode(rec arrow.RecordBatch, s *encodeScratch) (encoded, error) {
	defer rec.Release()
	if p.pages != nil {
		return p.pages.encode(rec, p.schema, s, &p.empty)
	}
	return encodeGroup(rec, p.schema, &s.bufs, &p.empty)
}

// splitParquet cuts a one-group file into its body and its metadata.
func splitParquet(b []byte) (encoded, error) {
	footer, err := splitParquetFooter(b)
	if err != nil {
		return encoded{}, err
	}
	meta, err := metadata.NewFileMetaData(footer, nil)
	if err != nil {
		return encoded{}, err
	}
	return encoded{body: [][]byte{b[4 : len(b)-8-len(footer)]}, meta: meta}, nil
}

// splitParquetFooter is the serialized footer of the file b.
func splitParquetFooter(b []byte) ([]byte, error) {
	n := len(b)
	if n < 12 {
		return nil, fmt.Errorf("parquet: a file of %d bytes", n)
	}
	size := int(binary.LittleEndian.Uint32(b[n-8:]))
	if size > n-12 {
		return nil, fmt.Errorf("parquet: a footer of %d bytes in a file of %d", size, n)
	}
	return b[n-8-size : n-8], nil
}

func (p *parquetAssembler) start() error {
	if p.started {
		return nil
	}
	p.started = true
	n, err := p.w.Write([]byte(ParquetMagic))
	p.at += int64(n)
	return err
}

func (p *parquetAssembler) write(e encoded) error {
	if err := p.start(); err != nil {
		return err
	}
	moveGroups(e.meta, 0, p.at-4)
	for _, rg := range e.meta.RowGroups {
		ordinal := p.ordinal()
		rg.Ordinal = &ordinal
		if p.footer == nil {
			p.footer = e.meta
		} else {
			p.footer.RowGroups = append(p.footer.RowGroups, rg)
			p.footer.NumRows += rg.NumRows
		}
	}
	for _, b := range e.body {
		n, err := p.w.Write(b)
		p.at += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// moveGroups moves the file offsets in the metadata of meta's row groups
// from the one numbered from on by shift. The offsets' types are the
// library's internal thrift ones: moved here, where the fields are
// reached through the metadata.
func moveGroups(meta *metadata.FileMetaData, from int, shift int64) {
	for _, rg := range meta.RowGroups[from:] {
		if rg.NumRows == 0 {
			continue // arrow-go leaves an empty group's offsets at 0 wherever it lies
		}
		rg.FileOffset = shifted(rg.FileOffset, shift)
		for _, c := range rg.Columns {
			c.FileOffset += shift
			c.OffsetIndexOffset, c.ColumnIndexOffset = shifted(c.OffsetIndexOffset, shift), shifted(c.ColumnIndexOffset, shift)
			if md := c.MetaData; md != nil {
				md.DataPageOffset += shift
				md.IndexPageOffset, md.DictionaryPageOffset = shifted(md.IndexPageOffset, shift), shifted(md.DictionaryPageOffset, shift)
				md.BloomFilterOffset = shifted(md.BloomFilterOffset, shift)
			}
		}
	}
}

// ordinal is the next row group's.
func (p *parquetAssembler) ordinal() int16 {
	if p.footer == nil {
		return 0
	}
	return int16(len(p.footer.RowGroups))
}

// close writes the footer; with no group, a file of no row groups as the
// library writes it.
func (p *parquetAssembler) close() error {
	if p.part {
		return nil
	}
	if p.footer == nil {
		sink, err := newSink(p.w, pointio.FormatParquet, p.schema)
		if err != nil {
			return err
		}
		return sink.Close()
	}
	n, err := p.footer.WriteTo(p.w, nil)
	if err != nil {
		return err
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:], uint32(n))
	copy(tail[4:], ParquetMagic)
	_, err = p.w.Write(tail[:])
	return err
}

// shifted is *v moved by shift (nil stays nil).
func shifted(v *int64, shift int64) *int64 {
	if v == nil {
		return nil
	}
	moved := *v + shift
	return &moved
}
