package numpyio

import (
	"fmt"
	"io"

	"github.com/geoknn/geoknn/stream"
)

// NPZArchive is an .npz archive of answers as its parts (an MPI job's
// ranks, each with its range of the observations) write it together into
// one file: the same bytes as the whole-answer writers write.
type NPZArchive struct {
	Kind stream.AnswerKind
	K    int // answers an observation (stream.KindKNearest)
	N    int // observations
	// Entries is the radius lists' total length (KindWithinLists).
	Entries int64
}

// NPZSum is what a part wrote of one array: its bytes' CRC-32 and length.
type NPZSum struct {
	CRC uint32
	Len int64
}

// NPZPart writes one part's answers of an NPZArchive at their offsets.
type NPZPart struct {
	z     *npzAnswers
	start []int64 // where each array's writer began
}

// NewNPZPartWriter writes the answers of observations lo on (Write's
// chunks, in order, Base counted in the whole archive) of the archive a
// into f at their offsets in it; entryLo is the number of radius list
// entries before lo. The first part (first, lo = 0) writes the arrays'
// NPY headers too; FinishNPZ then writes the zip structure around them.
// f's WriteAt is called from several goroutines at once, on ranges that
// do not overlap.
func NewNPZPartWriter(f io.WriterAt, a NPZArchive, lo int, entryLo int64, first bool) (*NPZPart, error) {
	w, err := NewNPZAnswerWriter(io.Discard, a.Kind, a.K, a.N, "")
	if err != nil {
		return nil, err
	}
	if lo < 0 || lo > a.N || entryLo < 0 || (a.Kind == stream.KindWithinLists && entryLo > a.Entries) || (first && lo > 0) {
		return nil, fmt.Errorf("npz: a part from observation %d (entry %d) of %d (%d)", lo, entryLo, a.N, a.Entries)
	}
	z := w.(*npzAnswers)
	l := newNPZLayout(f, z, a.N, a.Entries)
	z.next, z.offset = lo, uint64(entryLo)
	p := &NPZPart{z: z}
	for m, mb := range z.members {
		before := z.before(m, lo, entryLo, first)
		mb.count = int(before)
		p.start = append(p.start, l.dataAt(m, mb))
		if first {
			if err := l.open(m, mb); err != nil {
				return nil, err
			}
			continue
		}
		p.start[m] += int64(len(l.npy[m])) + before*int64(mb.size)
		mb.w = &atWriter{f: f, off: p.start[m]}
	}
	return p, nil
}

// before is how many elements of member m come before observation lo
// (entryLo list entries before it) in a part, the first or another.
func (z *npzAnswers) before(m, lo int, entryLo int64, first bool) int64 {
	switch {
	case first:
		return 0
	case z.kind == stream.KindKNearest:
		return int64(lo * z.k)
	case z.kind == stream.KindWithinCounts && m > 0:
		return 0
	case z.kind == stream.KindWithinLists && m == 1:
		return int64(lo) + 1 // the leading 0 is the first part's
	case z.kind == stream.KindWithinLists && m > 1:
		return entryLo
	}
	return int64(lo)
}

// Write writes a chunk of the part's answers.
func (p *NPZPart) Write(a stream.Answers) error { return p.z.Write(a) }

// Close ends the part: the first part of radius lists writes the
// offsets' leading 0 even where it holds no observation.
func (p *NPZPart) Close() error {
	z := p.z
	if z.kind == stream.KindWithinLists && z.members[1].count == 0 {
		return z.put(1, 1, func(b []byte, _ int) { clear(b[:8]) })
	}
	return nil
}

// Sums are what the part wrote of each array.
func (p *NPZPart) Sums() []NPZSum {
	sums := make([]NPZSum, len(p.z.members))
	for m, mb := range p.z.members {
		w := mb.w.(*atWriter)
		sums[m] = NPZSum{CRC: w.crc, Len: w.off - p.start[m]}
	}
	return sums
}

// FinishNPZ writes the zip structure of archive a into f around its
// arrays, which its parts have written: parts holds each part's Sums, in
// the order of their observations. The arrays' lengths are checked.
func FinishNPZ(f io.WriterAt, a NPZArchive, parts [][]NPZSum) error {
	w, err := NewNPZAnswerWriter(io.Discard, a.Kind, a.K, a.N, "")
	if err != nil {
		return err
	}
	z := w.(*npzAnswers)
	l := newNPZLayout(f, z, a.N, a.Entries)
	crcs := make([]uint32, len(z.members))
	for m, mb := range z.members {
		total := int64(0)
		for _, sums := range parts {
			crcs[m] = crc32Combine(crcs[m], sums[m].CRC, sums[m].Len)
			total += sums[m].Len
		}
		if total != l.length[m] {
			return fmt.Errorf("npz: array %s of %d bytes from its parts, want %d", mb.name, total, l.length[m])
		}
	}
	return l.headers(z.members, crcs)
}
