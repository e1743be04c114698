package ranks

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/geoknn/geoknn/mpi"
)

// reportRecord is the fixed size of a rank's report: its query seconds
// and its line.
const reportRecord = 512

// Reports are every rank's report line and query time, at rank 0.
type Reports struct {
	Lines []string
	Query []float64 // seconds
}

// Slowest is the rank whose query took longest (the first of equals).
func (r Reports) Slowest() int {
	slowest := 0
	for k, q := range r.Query {
		if q > r.Query[slowest] {
			slowest = k
		}
	}
	return slowest
}

// Times are a rank's account of its part of a job.
type Times struct {
	Load, Spread, Query time.Duration
	// Gather is the gather of its answers to rank 0, or Write, where
	// Wrote, its part of the one output written with the others (Output).
	Gather, Write time.Duration
	Wrote         bool
	N             int    // observations answered
	Devices       string // the engine and its devices
}

// GatherReports collects every rank's report line (Place.line) and query
// time at rank 0; the others get none.
func GatherReports(world mpi.Comm, p Place, t Times) (Reports, error) {
	// A record: the query's seconds (8 bytes), then the line.
	rec := make([]byte, reportRecord)
	binary.LittleEndian.PutUint64(rec, math.Float64bits(t.Query.Seconds()))
	copy(rec[8:], p.line(t))
	counts := make([]int, p.Size)
	for r := range counts {
		counts[r] = reportRecord
	}
	var all []byte
	if p.Rank == 0 {
		all = make([]byte, reportRecord*p.Size)
	}
	if err := world.Gatherv(rec, counts, all, 0); err != nil {
		return Reports{}, err
	}
	var rep Reports
	for r := 0; r < len(all); r += reportRecord {
		rep.Query = append(rep.Query, math.Float64frombits(binary.LittleEndian.Uint64(all[r:])))
		rep.Lines = append(rep.Lines, strings.TrimRight(string(all[r+8:r+reportRecord]), "\x00"))
	}
	return rep, nil
}

// line is the rank's report line: where it ran, what it answered and
// how long each part took, and what it took of the node's cores.
func (p Place) line(t Times) string {
	last := fmt.Sprintf("gather %.3f s", t.Gather.Seconds())
	if t.Wrote {
		last = fmt.Sprintf("write %.3f s", t.Write.Seconds())
	}
	return fmt.Sprintf("rank %d on %s (%s): %d observations, load %.3f s, spread %.3f s, query %.3f s, %s",
		p.Rank, p.Host, t.Devices, t.N, t.Load.Seconds(), t.Spread.Seconds(), t.Query.Seconds(), last) + p.coresNote()
}

// Lists are radius answers as columns: a count an observation and, for
// lists, the references within (Index, DistanceRad) at Offsets.
type Lists struct {
	Counts      []uint32
	Offsets     []uint64 // nil: counts alone
	Index       []uint32
	DistanceRad []float32
}

// GatherLists collects the ranks' counts (and lists, where the rank's
// have Offsets) at rank 0, whose offsets it rebuilds from the counts;
// counts are every rank's observations. The other ranks get nil.
func GatherLists(world mpi.Comm, rank int, counts []int, mine Lists) (*Lists, error) {
	var all *Lists
	if rank == 0 {
		all = &Lists{Counts: make([]uint32, Total(counts))}
	}
	var allCounts []uint32
	if all != nil {
		allCounts = all.Counts
	}
	if err := mpi.Gather(world, mine.Counts, allCounts, counts, 1, 0, 3); err != nil || mine.Offsets == nil {
		return all, err
	}
	// Every rank's list length, from the counts rank 0 now holds.
	listLens := make([]int, len(counts))
	var allIndex []uint32
	var allDist []float32
	if all != nil {
		all.Offsets = make([]uint64, len(allCounts)+1)
		for i, c := range allCounts {
			all.Offsets[i+1] = all.Offsets[i] + uint64(c)
		}
		lo := 0
		for r, c := range counts {
			listLens[r] = int(all.Offsets[lo+c] - all.Offsets[lo])
			lo += c
		}
		n := int(all.Offsets[len(allCounts)])
		all.Index, all.DistanceRad = make([]uint32, n), make([]float32, n)
		allIndex, allDist = all.Index, all.DistanceRad
	}
	if err := mpi.Gather(world, mine.Index, allIndex, listLens, 1, 0, 4); err != nil {
		return nil, err
	}
	return all, mpi.Gather(world, mine.DistanceRad, allDist, listLens, 1, 0, 5)
}

// Total is the sum of counts: the observations of ranks counts[r] each.
func Total(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// GatherRows collects every rank's rows of per answers an observation
// (index and distance; counts are every rank's observations) into
// allIndex and allDist at rank 0, made by the caller (nil elsewhere), with
// MPI tags tag and tag+1.
func GatherRows(world mpi.Comm, counts []int, per int, index []uint32, dist []float32, allIndex []uint32, allDist []float32, tag int) error {
	if err := mpi.Gather(world, index, allIndex, counts, per, 0, tag); err != nil {
		return err
	}
	return mpi.Gather(world, dist, allDist, counts, per, 0, tag+1)
}
