package numpyio

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// npzAnswers writes answers as the .npz archive the whole-answer writers
// write (WriteResultsNPZ, WriteKResultsNPZ, WriteWithinNPZ): numpy.savez's
// layout, each array a stored member after the one before. A member's
// bytes are final once its length is: the first member, whose length the
// observation count gives, goes straight into the archive; the later
// ones wait in temporary files until Close, which copies them in.
type npzAnswers struct {
	zw      *zip.Writer
	kind    stream.AnswerKind
	k       int
	n       int // the observations there will be (-1: not known)
	members []*npzOutMember
	next    int
	offset  uint64 // radius lists: the entries written so far
	dir     string
	at      *npzLayout          // in place: each array written at its offset
	rounds  pointio.BlockRounds // the encodings, reused chunk after chunk
	blocks  atBlocks            // the same for arrays written in place
}

// npzOutMember is one array of the archive being written.
type npzOutMember struct {
	name, descr string
	size        int
	count       int      // elements written
	spill       *os.File // the bytes waiting, or nil when written in place
	w           io.Writer
}

// NewNPZAnswerWriter writes answers of kind (k a row for KindKNearest) to
// w as the .npz archive the whole-answer writers write. n is the number
// of observations when known up front (from a Parquet file's metadata, a
// .npy header), else -1: the first array is then held in a temporary file
// too. Temporary files go to dir ("": os.TempDir()); Close and Abort
// remove them.
func NewNPZAnswerWriter(w io.Writer, kind stream.AnswerKind, k, n int, dir string) (stream.AnswerWriter, error) {
	if kind < stream.KindNearest || kind > stream.KindWithinLists || (kind == stream.KindKNearest && k < 1) {
		return nil, fmt.Errorf("npz: answers of kind %d with k %d", kind, k)
	}
	if kind != stream.KindKNearest {
		k = 1
	}
	z := &npzAnswers{zw: zip.NewWriter(w), kind: kind, k: k, n: n, dir: dir}
	ref, dist := &npzOutMember{name: "ref_index", descr: RefIndexDescr, size: 4}, &npzOutMember{name: "distance_m", descr: "<f8", size: 8}
	z.members = []*npzOutMember{ref, dist}
	if kind == stream.KindWithinCounts || kind == stream.KindWithinLists {
		z.members = []*npzOutMember{{name: "counts", descr: "<u4", size: 4}, {name: "offsets", descr: "<u8", size: 8}, ref, dist}
	}
	return z, nil
}

// shape is the NumPy shape of member m once complete.
func (z *npzAnswers) shape(m int) string {
	if z.kind == stream.KindKNearest {
		return fmt.Sprintf("(%d, %d)", z.members[m].count/z.k, z.k)
	}
	return fmt.Sprintf("(%d,)", z.members[m].count)
}

// open makes member m's destination: the archive for the first when the
// count is known, else a temporary file.
func (z *npzAnswers) open(m int) error {
	mb := z.members[m]
	if mb.w != nil {
		return nil
	}
	if z.at != nil {
		return z.at.open(m, mb)
	}
	if m == 0 && z.n >= 0 {
		shape := fmt.Sprintf("(%d,)", z.n)
		if z.kind == stream.KindKNearest {
			shape = fmt.Sprintf("(%d, %d)", z.n, z.k)
		}
		return z.startMember(mb, shape)
	}
	f, err := os.CreateTemp(z.dir, ".knn-npz-*")
	if err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	mb.spill, mb.w = f, f
	return nil
}

// startMember adds mb to the archive with its NPY header.
func (z *npzAnswers) startMember(mb *npzOutMember, shape string) error {
	f, err := z.zw.CreateHeader(&zip.FileHeader{Name: mb.name + ".npy", Method: zip.Store})
	if err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	if _, err := io.WriteString(f, npyHeaderShape(mb.descr, shape)); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	mb.w = f
	return nil
}

func (z *npzAnswers) Write(a stream.Answers) error {
	if err := stream.CheckOrder(&z.next, a); err != nil {
		return err
	}
	if z.n >= 0 && z.next > z.n {
		return fmt.Errorf("npz: observation %d of the %d announced", z.next-1, z.n)
	}
	for m := range z.members {
		if err := z.open(m); err != nil {
			return err
		}
	}
	if z.kind == stream.KindNearest || z.kind == stream.KindKNearest {
		return z.writeRows(a)
	}
	return z.writeWithin(a)
}

// writeRows writes a chunk of nearest or k-nearest answers: N x K
// elements of each array.
func (z *npzAnswers) writeRows(a stream.Answers) error {
	k := max(z.k, 1)
	at := func(e int) (uint32, float64, bool) {
		if z.kind == stream.KindNearest {
			ref, m := a.Nearest(e)
			return ref, m, true
		}
		return a.KRow(e/k, e%k)
	}
	ref := func(b []byte, e int) {
		r, _, ok := at(e)
		if !ok {
			r = math.MaxUint32
		}
		binary.LittleEndian.PutUint32(b, r)
	}
	dist := func(b []byte, e int) {
		_, m, ok := at(e)
		if !ok {
			m = math.Inf(1)
		}
		binary.LittleEndian.PutUint64(b, math.Float64bits(m))
	}
	if err := z.put(0, a.N*k, ref); err != nil {
		return err
	}
	return z.put(1, a.N*k, dist)
}

// writeWithin writes a chunk of radius answers in CSR form: counts,
// offsets (their running sum, from 0), and the lists' entries.
func (z *npzAnswers) writeWithin(a stream.Answers) error {
	counts := make([]uint64, a.N+1) // the chunk's own offsets
	for j := range a.N {
		counts[j+1] = counts[j] + uint64(a.Within.Count(j))
	}
	if err := z.put(0, a.N, func(b []byte, j int) { binary.LittleEndian.PutUint32(b, uint32(counts[j+1]-counts[j])) }); err != nil {
		return err
	}
	if z.kind == stream.KindWithinCounts {
		return nil
	}
	base, first := z.offset, z.members[1].count == 0
	if first {
		if err := z.put(1, 1, func(b []byte, _ int) { binary.LittleEndian.PutUint64(b, 0) }); err != nil {
			return err
		}
	}
	if err := z.put(1, a.N, func(b []byte, j int) { binary.LittleEndian.PutUint64(b, base+counts[j+1]) }); err != nil {
		return err
	}
	total := int(counts[a.N])
	z.offset += uint64(total)
	entry := func(e int) (uint32, float64) {
		j := sort.Search(a.N, func(j int) bool { return counts[j+1] > uint64(e) })
		return a.Within.Ref(j, e-int(counts[j]))
	}
	if err := z.put(2, total, func(b []byte, e int) { r, _ := entry(e); binary.LittleEndian.PutUint32(b, r) }); err != nil {
		return err
	}
	return z.put(3, total, func(b []byte, e int) { _, m := entry(e); binary.LittleEndian.PutUint64(b, math.Float64bits(m)) })
}

// put encodes n elements of member m on every core, as writeNPY does, and
// writes them: in order to a stream, or each block at its offset to an
// array written in place.
func (z *npzAnswers) put(m, n int, enc func(b []byte, e int)) error {
	mb := z.members[m]
	encode := func(dst []byte, lo, hi int) ([]byte, error) {
		dst = slices.Grow(dst[:0], (hi-lo)*mb.size)[:(hi-lo)*mb.size]
		for e := lo; e < hi; e++ {
			enc(dst[(e-lo)*mb.size:], e)
		}
		return dst, nil
	}
	var err error
	if w, ok := mb.w.(*atWriter); ok {
		err = z.blocks.write(w, n, npyChunk, mb.size, encode)
	} else {
		err = z.rounds.Write(mb.w, n, npyChunk, encode)
	}
	if err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	mb.count += n
	return nil
}

// Close copies the waiting members in and writes the archive's directory.
func (z *npzAnswers) Close() error {
	defer z.Abort()
	for m := range z.members {
		if err := z.open(m); err != nil {
			return err
		}
	}
	if z.n >= 0 && z.next != z.n {
		return fmt.Errorf("npz: %d observations written of the %d announced", z.next, z.n)
	}
	if z.at != nil {
		return z.at.finish(z.members)
	}
	if z.kind == stream.KindWithinLists && z.members[1].count == 0 {
		// No observations: offsets still holds its leading 0.
		if err := z.put(1, 1, func(b []byte, _ int) { binary.LittleEndian.PutUint64(b, 0) }); err != nil {
			return err
		}
	}
	for m, mb := range z.members {
		if mb.spill == nil {
			continue
		}
		if err := z.copyIn(m, mb); err != nil {
			return err
		}
	}
	if err := z.zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// copyIn adds a waiting member to the archive.
func (z *npzAnswers) copyIn(m int, mb *npzOutMember) error {
	if _, err := mb.spill.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	if err := z.startMember(mb, z.shape(m)); err != nil {
		return err
	}
	if _, err := io.Copy(mb.w, mb.spill); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// Abort removes the temporary files.
func (z *npzAnswers) Abort() {
	for _, mb := range z.members {
		if mb.spill != nil {
			mb.spill.Close()
			os.Remove(mb.spill.Name())
			mb.spill = nil
		}
	}
}
