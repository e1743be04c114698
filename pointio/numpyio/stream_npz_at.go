package numpyio

import (
	"archive/zip"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync/atomic"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/stream"
)

// NewNPZAnswerWriterAt is NewNPZAnswerWriter writing to f, the output
// file itself (the temporary file of WriteAtomicFile, say), from offset
// 0. When every array's length is known up front (n >= 0, and not
// KindWithinLists, whose lists' lengths come with the answers), each
// array is written at its own offset as its chunks come, and Close writes
// the zip headers around them: no temporary file, the same bytes as the
// whole-answer writers (stored members with data descriptors, whose
// local headers do not depend on the data); f's WriteAt is then called
// from several goroutines at once, on ranges that do not overlap, as
// io.WriterAt allows. Otherwise it streams to f as NewNPZAnswerWriter
// does.
func NewNPZAnswerWriterAt(f io.WriterAt, kind stream.AnswerKind, k, n int, dir string) (stream.AnswerWriter, error) {
	w, err := NewNPZAnswerWriter(&atWriter{f: f}, kind, k, n, dir)
	if err != nil || n < 0 || kind == stream.KindWithinLists {
		return w, err
	}
	z := w.(*npzAnswers)
	z.at = newNPZLayout(f, z, n, 0)
	return z, nil
}

// atWriter writes to f from off on, keeping the CRC-32 of what it wrote.
type atWriter struct {
	f   io.WriterAt
	off int64
	crc uint32
}

func (a *atWriter) Write(p []byte) (int, error) {
	n, err := a.f.WriteAt(p, a.off)
	a.crc = crc32.Update(a.crc, crc32.IEEETable, p[:n])
	a.off += int64(n)
	return n, err
}

// npzLayout is where each array of an archive goes when every length is
// known: its local header, its NPY header, its data, its data descriptor.
type npzLayout struct {
	f      io.WriterAt
	local  []int64  // each member's local header offset
	npy    []string // each member's NPY header
	length []int64  // each member's bytes (NPY header and data)
}

// zipLocalHeaderLen is a local file header's fixed part.
const zipLocalHeaderLen = 30

func newNPZLayout(f io.WriterAt, z *npzAnswers, n int, entries int64) *npzLayout {
	l := &npzLayout{f: f}
	off := int64(0)
	for m, mb := range z.members {
		count, shape := npzMemberShape(z.kind, z.k, m, int64(n), entries)
		h := npyHeaderShape(mb.descr, shape)
		length := int64(len(h)) + count*int64(mb.size)
		l.local, l.npy, l.length = append(l.local, off), append(l.npy, h), append(l.length, length)
		off += zipLocalHeaderLen + int64(len(mb.name)+len(".npy")) + length + descriptorLen(length)
	}
	return l
}

// npzMemberShape is member m's element count and NumPy shape in the
// archive of n answers of kind (k a row; entries the radius lists'
// total).
func npzMemberShape(kind stream.AnswerKind, k, m int, n, entries int64) (int64, string) {
	switch {
	case kind == stream.KindKNearest:
		return n * int64(k), fmt.Sprintf("(%d, %d)", n, k)
	case kind == stream.KindWithinCounts && m > 0:
		return 0, "(0,)"
	case kind == stream.KindWithinLists && m == 1:
		return n + 1, fmt.Sprintf("(%d,)", n+1)
	case kind == stream.KindWithinLists && m > 1:
		return entries, fmt.Sprintf("(%d,)", entries)
	}
	return n, fmt.Sprintf("(%d,)", n)
}

// dataAt is where member m's bytes (its NPY header, then its data) begin.
func (l *npzLayout) dataAt(m int, mb *npzOutMember) int64 {
	return l.local[m] + zipLocalHeaderLen + int64(len(mb.name)+len(".npy"))
}

// descriptorLen is the data descriptor archive/zip writes after a stored
// member of length bytes.
func descriptorLen(length int64) int64 {
	if length >= math.MaxUint32 {
		return 24
	}
	return 16
}

// open points member m's writer at its data, after its NPY header.
func (l *npzLayout) open(m int, mb *npzOutMember) error {
	w := &atWriter{f: l.f, off: l.dataAt(m, mb)}
	if _, err := io.WriteString(w, l.npy[m]); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	mb.w = w
	return nil
}

// finish writes the zip structure around the arrays in place, after
// checking that each was written whole.
func (l *npzLayout) finish(members []*npzOutMember) error {
	crcs := make([]uint32, len(members))
	for m, mb := range members {
		w := mb.w.(*atWriter)
		if w.off != l.dataAt(m, mb)+l.length[m] {
			return fmt.Errorf("npz: array %s of %d bytes, want %d", mb.name, w.off-l.local[m], l.length[m])
		}
		crcs[m] = w.crc
	}
	return l.headers(members, crcs)
}

// headers writes the zip structure around the arrays, whose CRCs are
// crcs: archive/zip writes it through a writer that skips the arrays'
// bytes.
func (l *npzLayout) headers(members []*npzOutMember, crcs []uint32) error {
	sw := &skipWriter{f: l.f}
	zw := zip.NewWriter(sw)
	for m, mb := range members {
		if err := l.member(zw, sw, mb, crcs[m], uint64(l.length[m])); err != nil {
			return fmt.Errorf("npz: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// member adds mb's headers as CreateHeader and its writer's close would
// write them: version 2.0, a data descriptor, 4.5 in the directory for a
// ZIP64 member.
func (l *npzLayout) member(zw *zip.Writer, sw *skipWriter, mb *npzOutMember, crc uint32, length uint64) error {
	fh := &zip.FileHeader{Name: mb.name + ".npy", Method: zip.Store, Flags: 0x8, CreatorVersion: 20, ReaderVersion: 20,
		CRC32: crc, CompressedSize64: length, UncompressedSize64: length}
	w, err := zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	// archive/zip buffers: what it holds goes out before the skipping
	// starts, and the skipped bytes before it ends.
	if err := zw.Flush(); err != nil {
		return err
	}
	sw.skip = true
	var zeros [1 << 16]byte
	for left := length; left > 0; {
		n := min(left, uint64(len(zeros)))
		if _, err := w.Write(zeros[:n]); err != nil {
			return err
		}
		left -= n
	}
	if err := zw.Flush(); err != nil {
		return err
	}
	sw.skip = false
	if length >= math.MaxUint32 {
		fh.ReaderVersion = 45 // as the writer's close sets it, for the directory
	}
	return nil
}

// skipWriter writes at its offset, or with skip only moves it.
type skipWriter struct {
	f    io.WriterAt
	off  int64
	skip bool
}

func (s *skipWriter) Write(p []byte) (int, error) {
	if s.skip {
		s.off += int64(len(p))
		return len(p), nil
	}
	n, err := s.f.WriteAt(p, s.off)
	s.off += int64(n)
	return n, err
}

// atBlocks writes the elements of an array written in place on every
// core: each worker encodes a block, takes its CRC-32 and writes it at its
// offset, and the blocks' CRCs combine in order into the array's. Nothing
// has to reach the file in order, so no one thread issues every write or
// reads every byte for the CRC. Its buffers, one a worker, are kept from
// chunk to chunk: fresh ones cost page faults on every core.
type atBlocks struct{ bufs [][]byte }

// blockSum is what writing one block came to.
type blockSum struct {
	crc uint32
	len int64
	err error
}

// write encodes elements [0, n) of size bytes in blocks of block elements
// and writes them at w's offset on, then moves w past them.
func (b *atBlocks) write(w *atWriter, n, block, size int, encode func(dst []byte, lo, hi int) ([]byte, error)) error {
	sums := make([]blockSum, (n+block-1)/block)
	for len(b.bufs) < parallel.Workers(n, block, 0) {
		b.bufs = append(b.bufs, nil)
	}
	var failed atomic.Bool // the blocks left are not worth writing
	parallel.Blocks(n, block, 0, func(k, lo, hi int) {
		if failed.Load() {
			return
		}
		i := lo / block
		if sums[i] = b.block(k, w.f, w.off+int64(lo)*int64(size), lo, hi, encode); sums[i].err != nil {
			failed.Store(true)
		}
	})
	return w.advance(sums)
}

// block encodes items [lo, hi) into worker k's buffer and writes them at
// off.
func (b *atBlocks) block(k int, f io.WriterAt, off int64, lo, hi int, encode func(dst []byte, lo, hi int) ([]byte, error)) (s blockSum) {
	// A bug in an encoder must not take the process down with a temporary
	// file left behind: it becomes this write's error.
	defer func() {
		if p := recover(); p != nil {
			s = blockSum{err: fmt.Errorf("internal error encoding items %d to %d: %v", lo, hi, p)}
		}
	}()
	buf, err := encode(b.bufs[k][:0], lo, hi)
	if err != nil {
		return blockSum{err: err}
	}
	b.bufs[k] = buf
	if _, err := f.WriteAt(buf, off); err != nil {
		return blockSum{err: err}
	}
	return blockSum{crc: crc32.ChecksumIEEE(buf), len: int64(len(buf))}
}

// advance moves a past blocks written in order from its offset, or
// returns the first error among them (blocks after a failure are left
// unwritten, with no error of their own).
func (a *atWriter) advance(sums []blockSum) error {
	for _, s := range sums {
		if s.err != nil {
			return s.err
		}
	}
	for _, s := range sums {
		a.crc = crc32Combine(a.crc, s.crc, s.len)
		a.off += s.len
	}
	return nil
}
