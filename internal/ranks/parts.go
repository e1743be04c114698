package ranks

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/csvio"
	"github.com/geoknn/geoknn/pointio/numpyio"
)

// writeSpilled writes the rank's part of a format whose parts' lengths
// are known only once written (CSV, Parquet) through write: rank 0's
// straight into f from head on, the others' into a file beside the output,
// copied into f at their offset once every rank's length is known. It
// returns where the rank's part begins and where the last one ends.
func (o *Output) writeSpilled(ctx context.Context, f *os.File, head int64, write func(w io.Writer) error) (at, end int64, err error) {
	var out io.WriteSeeker = io.NewOffsetWriter(f, head)
	var spill *os.File
	if o.Rank > 0 {
		dir, base := filepath.Split(o.Path)
		if dir == "" {
			dir = "." // beside the output, on its filesystem: not os.TempDir
		}
		if spill, err = os.CreateTemp(dir, fmt.Sprintf(".%s.rank%d.tmp-", base, o.Rank)); err == nil {
			remove := func() { os.Remove(spill.Name()) }
			// A signal removes it at once too: the rank may be waiting in
			// a collective that never returns when another rank ends the
			// job.
			defer context.AfterFunc(ctx, remove)()
			defer remove()
			defer spill.Close()
			out = spill
		}
	}
	size := int64(-1)
	if err == nil {
		err = write(pointio.ContextWriter(ctx, out))
	}
	if err == nil {
		size, err = out.Seek(0, io.SeekCurrent) // from head on for rank 0's
	}
	if at, end, err = o.place(head, size, err); err != nil {
		return 0, 0, err
	}
	if spill != nil {
		err = copyAt(ctx, f, at, spill)
	}
	return at, end, AllOK(o.World, err)
}

// writeCounted writes the rank's part of a format whose length is known
// only once encoded: encoded once into a counter, then, once every
// rank's length is known, again straight into f at its offset.
func (o *Output) writeCounted(ctx context.Context, f *os.File, head int64, write func(w io.Writer) error) (at, end int64, err error) {
	var n pointio.CountingWriter
	err = write(pointio.ContextWriter(ctx, &n))
	o.counted++
	return o.writeSized(ctx, f, head, int64(n), err, write)
}

// writeSized writes the rank's part, of size bytes counted before (or
// the error counting them), straight into f at its offset after head and
// the parts of the ranks before, once the ranks' lengths are exchanged.
// It returns where the rank's part begins and where the last one ends.
func (o *Output) writeSized(ctx context.Context, f *os.File, head, size int64, err error, write func(w io.Writer) error) (at, end int64, _ error) {
	at, end, err = o.place(head, size, err)
	if err != nil {
		return 0, 0, err
	}
	w := io.NewOffsetWriter(f, at)
	err = write(pointio.ContextWriter(ctx, w))
	if wrote, _ := w.Seek(0, io.SeekCurrent); err == nil && wrote != size {
		err = fmt.Errorf("wrote %d bytes of the %d counted", wrote, size)
	}
	return at, end, AllOK(o.World, err)
}

// place exchanges the ranks' part lengths (size, this rank's; err its
// failure, which every rank learns) and returns where this rank's part
// begins after head and the parts before it, and where the last ends.
func (o *Output) place(head, size int64, err error) (at, end int64, _ error) {
	if err != nil {
		size = -1
	}
	sizes, gerr := o.World.AllgatherInt64([]int64{size})
	if gerr != nil {
		return 0, 0, gerr
	}
	if err := failedRank(sizes, err); err != nil {
		return 0, 0, err
	}
	at, end = head, head
	for r, n := range sizes {
		if r < o.Rank {
			at += n
		}
		end += n
	}
	return at, end, nil
}

// writeCSVPart writes the rank's answers as CSV lines straight into f
// at its offset: their lengths are counted (csvio.AnswersSize) without
// formatting them.
func (o *Output) writeCSVPart(ctx context.Context, f *os.File, p Part) error {
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		aw, err := csvio.NewAnswerPartWriter(bw, p.Kind, p.K, p.Answers.Base, o.Rank == 0)
		if err == nil {
			err = aw.Write(p.Answers)
		}
		if err == nil {
			err = aw.Close()
		}
		return err
	}
	size, err := csvio.AnswersSize(p.Kind, p.K, p.Answers, o.Rank == 0)
	_, _, err = o.writeSized(ctx, f, 0, size, err, write)
	return err
}

// copyAt copies all of src into f from offset at: file to file, in the
// kernel where the system can (copy_file_range, through os.File's
// ReadFrom).
func copyAt(ctx context.Context, f *os.File, at int64, src *os.File) error {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := f.Seek(at, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		return err
	}
	return ctx.Err()
}

// writeParquetPart writes the rank's row groups (its range starts at a
// row group's first observation: shares) and has rank 0 write the magic
// and the footer of every rank's groups.
func (o *Output) writeParquetPart(ctx context.Context, f *os.File, p Part) error {
	spill, err := o.spills(parquetAnswerBytes(p))
	if err != nil {
		return err
	}
	return o.writeParquetGroups(ctx, f, !spill, func(w io.Writer) (parquetPart, error) {
		part, err := arrowio.NewParquetPartWriter(w, p.Kind, p.K, p.Answers.Base, arrowio.StreamOptions{})
		if err != nil {
			return nil, err
		}
		return part, part.Write(p.Answers)
	}, func(w io.WriterAt, end int64, metas [][]byte) error {
		return arrowio.FinishParquet(w, end, p.Kind, p.K, metas)
	})
}

// parquetPart is a part of a Parquet file being written (arrowio's
// ParquetPart, ParquetRowsPart).
type parquetPart interface {
	Close() error
	Abort()
	Meta(at int64) ([]byte, error)
}

// writeParquetGroups writes the row groups write makes (a part written
// whole, or the error that stopped it) at the rank's place in f,
// counted first or spilled (count), and has rank 0 write the magic and,
// through footer, the footer of every rank's groups.
func (o *Output) writeParquetGroups(ctx context.Context, f *os.File, count bool, write func(w io.Writer) (parquetPart, error),
	footer func(w io.WriterAt, end int64, metas [][]byte) error) error {
	var part parquetPart
	encode := func(w io.Writer) error {
		part = nil // a counted pass's part: its buffers are not kept through the next
		p, err := write(w)
		if err != nil {
			if p != nil {
				p.Abort()
			}
			return err
		}
		part = p
		return p.Close()
	}
	place := o.writeSpilled
	if count {
		place = o.writeCounted
	}
	at, end, err := place(ctx, f, 4, encode)
	if err != nil {
		return err
	}
	return o.finishParquet(ctx, f, part.Meta, at, func(metas [][]byte) error {
		return footer(ctxWriterAt{ctx, f}, end, metas)
	})
}

// writeCSVRowsPart writes the rank's answers with identifiers as CSV
// lines, spilled: their lengths are known once formatted.
func (o *Output) writeCSVRowsPart(ctx context.Context, f *os.File, t Rows) error {
	_, _, err := o.writeSpilled(ctx, f, 0, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		cw := csvio.NewRowsPartWriter(bw, t.header(), o.Rank == 0)
		if err := cw.Write(t.N, t.Text); err != nil {
			return err
		}
		return cw.Close()
	})
	return err
}

// writeParquetRowsPart writes the rank's answers with identifiers as
// Parquet row groups, spilled, with the footer by rank 0, as
// writeParquetPart: counting them would box every value twice (280-390
// ns a row a core to build).
func (o *Output) writeParquetRowsPart(ctx context.Context, f *os.File, t Rows) error {
	return o.writeParquetGroups(ctx, f, false, func(w io.Writer) (parquetPart, error) {
		part, err := arrowio.NewParquetRowsPartWriter(w, t.Fields, arrowio.StreamOptions{})
		if err != nil {
			return nil, err
		}
		return part, part.Write(t.N, t.Values)
	}, func(w io.WriterAt, end int64, metas [][]byte) error {
		return arrowio.FinishParquetRows(w, end, t.Fields, metas)
	})
}

// finishParquet gathers the ranks' row groups' metadata (meta, placed at
// the rank's offset at) to rank 0, which writes the footer with finish.
func (o *Output) finishParquet(ctx context.Context, f *os.File, meta func(at int64) ([]byte, error), at int64, finish func(metas [][]byte) error) error {
	m, err := meta(at)
	metas, err := o.gatherBytes(m, err)
	if err != nil {
		return err
	}
	if o.Rank == 0 {
		err = finish(metas)
	}
	return AllOK(o.World, err)
}

// gatherBytes collects every rank's b at rank 0, in rank order (nil
// elsewhere); err is this rank's failure, which every rank learns.
func (o *Output) gatherBytes(b []byte, err error) ([][]byte, error) {
	n := int64(len(b))
	if err != nil {
		n = -1
	}
	lens, gerr := o.World.AllgatherInt64([]int64{n})
	if gerr != nil {
		return nil, gerr
	}
	if err := failedRank(lens, err); err != nil {
		return nil, err
	}
	counts, total := make([]int, o.Size), 0
	for r, l := range lens {
		counts[r] = int(l)
		total += int(l)
	}
	var all []byte
	if o.Rank == 0 {
		all = make([]byte, total)
	}
	if err := o.World.Gatherv(b, counts, all, 0); err != nil || o.Rank != 0 {
		return nil, err
	}
	out, at := make([][]byte, o.Size), 0
	for r, c := range counts {
		out[r], at = all[at:at+c], at+c
	}
	return out, nil
}

// npzRecord is a rank's account of its npz part: a status, then each
// array's CRC and length (at most 4 arrays).
const npzRecord = 1 + 2*4

// writeNPZPart writes the rank's rows of every array at their offsets,
// the radius lists' from the entries of the ranks before, and has rank 0
// write the zip structure with every array's CRC combined from the
// ranks'.
func (o *Output) writeNPZPart(ctx context.Context, f *os.File, p Part) error {
	entries, err := o.World.AllgatherInt64([]int64{p.Entries})
	if err != nil {
		return err
	}
	a := numpyio.NPZArchive{Kind: p.Kind, K: p.K, N: o.N}
	var before int64
	for r, e := range entries {
		if r < o.Rank {
			before += e
		}
		a.Entries += e
	}
	rec := make([]int64, npzRecord)
	sums, err := o.npzPart(ctx, f, a, p, before)
	if err != nil {
		rec[0] = -1
	}
	for m, s := range sums {
		rec[1+2*m], rec[2+2*m] = int64(s.CRC), s.Len
	}
	all, gerr := o.World.AllgatherInt64(rec)
	if gerr != nil {
		return gerr
	}
	status := make([]int64, o.Size)
	for r := range status {
		status[r] = all[r*npzRecord]
	}
	if err := failedRank(status, err); err != nil {
		return err
	}
	if o.Rank == 0 {
		err = numpyio.FinishNPZ(ctxWriterAt{ctx, f}, a, npzSums(all, o.Size, len(sums)))
	}
	return AllOK(o.World, err)
}

// npzPart writes the rank's rows of archive a into f.
func (o *Output) npzPart(ctx context.Context, f *os.File, a numpyio.NPZArchive, p Part, before int64) ([]numpyio.NPZSum, error) {
	w, err := numpyio.NewNPZPartWriter(ctxWriterAt{ctx, f}, a, p.Answers.Base, before, o.Rank == 0)
	if err != nil {
		return nil, err
	}
	if err := w.Write(p.Answers); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return w.Sums(), ctx.Err()
}

// npzSums are the ranks' records' sums of arrays arrays each.
func npzSums(all []int64, ranks, arrays int) [][]numpyio.NPZSum {
	parts := make([][]numpyio.NPZSum, ranks)
	for r := range parts {
		rec := all[r*npzRecord:]
		for m := range arrays {
			parts[r] = append(parts[r], numpyio.NPZSum{CRC: uint32(rec[1+2*m]), Len: rec[2+2*m]})
		}
	}
	return parts
}

// ctxWriterAt is f that stops writing once ctx is done.
type ctxWriterAt struct {
	ctx context.Context
	f   io.WriterAt
}

func (c ctxWriterAt) WriteAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.f.WriteAt(p, off)
}
