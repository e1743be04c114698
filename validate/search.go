package validate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/paulmach/orb"

	par "github.com/geoknn/geoknn/internal/parallel"
)

// The brute force ranks references by squared chord between unit vectors,
// which costs a few multiplications per pair, and re-ranks by the float64
// haversine only the references whose squared chord is within chordMargin of
// the best so far. Squared chord is exactly 4h mathematically; computed, the
// two differ by well under 1e-14, so chordMargin (about 1000 times that)
// guarantees that the reference with the smallest haversine, and every
// reference equal to it, is among those re-ranked. The result is therefore
// bit-for-bit the answer of a plain haversine scan, lowest index on ties.
const chordMargin = 4e-12

const (
	// refTile references (96 KiB of vectors) stay in L2 cache while a chunk
	// of observations sweeps them.
	refTile = 4096
	// maxObsChunk is the most observations handled by one work item.
	maxObsChunk = 64
	// minSplit is the fewest references in one part when the reference set
	// is split to keep all goroutines busy with few observations.
	minSplit = 1 << 15
	// batchSize observations are searched at a time, bounding scratch memory.
	batchSize = 1 << 16
)

// searcher holds the references prepared for the brute force.
type searcher struct {
	ref     []orb.Point
	xyz     [][3]float64
	workers int
}

func newSearcher(ref []orb.Point, workers int) (*searcher, error) {
	if len(ref) == 0 {
		return nil, fmt.Errorf("validate: no references")
	}
	if uint64(len(ref)) > math.MaxUint32+1 {
		return nil, fmt.Errorf("validate: %d references do not fit uint32 indices", len(ref))
	}
	if err := checkFinite("reference", ref); err != nil {
		return nil, err
	}
	s := &searcher{ref: ref, xyz: make([][3]float64, len(ref)), workers: max(workers, 1)}
	const block = 1 << 14
	parallel((len(ref)+block-1)/block, s.workers, func(b int) {
		lo := b * block
		for j := lo; j < min(lo+block, len(ref)); j++ {
			s.xyz[j] = unit(ref[j])
		}
	})
	return s, nil
}

// checkFinite reports the first point with a NaN or infinite coordinate.
func checkFinite(what string, pts []orb.Point) error {
	for i, p := range pts {
		if math.IsNaN(p[0]) || math.IsInf(p[0], 0) || math.IsNaN(p[1]) || math.IsInf(p[1], 0) {
			return fmt.Errorf("validate: %s %d has a non-finite coordinate %v", what, i, p)
		}
	}
	return nil
}

// parallel calls fn(item) for every item in [0, n) on up to workers
// goroutines. Items are handed out in increasing order.
func parallel(n, workers int, fn func(item int)) {
	par.Blocks(n, 1, max(workers, 1), func(_, item, _ int) { fn(item) })
}

// stopFlag returns a flag that is set once ctx is done, and a function to
// release it. Polling an atomic is cheaper than ctx.Err in the inner loops.
func stopFlag(ctx context.Context) (*atomic.Bool, func() bool) {
	var stop atomic.Bool
	if ctx.Err() != nil {
		stop.Store(true)
	}
	return &stop, context.AfterFunc(ctx, func() { stop.Store(true) })
}

// nearest writes, for every observation, the index of the reference with
// the smallest float64 haversine (lowest index among equals) and the
// haversine h of that distance. It returns false if stop was set.
func (s *searcher) nearest(stop *atomic.Bool, obs []orb.Point, idx []int, h []float64) bool {
	if len(obs) == 0 {
		return !stop.Load()
	}
	p := s.plan(len(obs))
	// Each part of the references gets its own slot per observation; the
	// slots are merged once every part is done.
	pIdx, pH := idx, h
	if p.splits > 1 {
		pIdx, pH = make([]int, len(obs)*p.splits), make([]float64, len(obs)*p.splits)
	}
	parallel(p.chunks*p.splits, s.workers, func(item int) {
		s.searchItem(stop, p, item, obs, pIdx, pH)
	})
	if stop.Load() {
		return false
	}
	if p.splits > 1 {
		mergeParts(p.splits, pIdx, pH, idx, h)
	}
	return true
}

// searchPlan is how nearest divides its work: work item i searches chunk
// i/splits of the observations against part i%splits of the references.
type searchPlan struct {
	chunk, chunks int // observations per chunk, and number of chunks
	part, splits  int // references per part, and number of parts
}

// plan divides a search for nobs observations among the workers.
func (s *searcher) plan(nobs int) searchPlan {
	nref, w := len(s.ref), s.workers
	chunk := min(max(nobs/(4*w), 1), maxObsChunk)
	chunks := (nobs + chunk - 1) / chunk
	// With few observations, split the references too so that every
	// goroutine has work; the parts are merged in index order afterwards.
	splits := 1
	if chunks < 4*w {
		splits = min((4*w+chunks-1)/chunks, max(nref/minSplit, 1))
	}
	part := (nref + splits - 1) / splits
	splits = (nref + part - 1) / part
	return searchPlan{chunk: chunk, chunks: chunks, part: part, splits: splits}
}

// searchItem runs work item item of plan p, writing the best reference of
// the part for observation i to slot i*p.splits + part of idx and h. It
// writes nothing if stop is set before it is done.
func (s *searcher) searchItem(stop *atomic.Bool, p searchPlan, item int, obs []orb.Point, idx []int, h []float64) {
	c, sp := item/p.splits, item%p.splits
	olo, ohi := c*p.chunk, min((c+1)*p.chunk, len(obs))
	rlo, rhi := sp*p.part, min((sp+1)*p.part, len(s.ref))
	var buf [maxObsChunk]query
	qs := buf[:ohi-olo]
	for k := range qs {
		qs[k] = newQuery(obs[olo+k])
	}
	if !s.scan(stop, qs, rlo, rhi) {
		return
	}
	for k := range qs {
		o := (olo+k)*p.splits + sp
		idx[o], h[o] = qs[k].best, qs[k].bestH
	}
}

// scan updates the queries' running bests over references [lo, hi). It
// sweeps the references a tile at a time so that each tile stays in cache
// while every query scans it, and returns false if stop was set.
func (s *searcher) scan(stop *atomic.Bool, qs []query, lo, hi int) bool {
	for t := lo; t < hi; t += refTile {
		if stop.Load() {
			return false
		}
		te := min(t+refTile, hi)
		for k := range qs {
			qs[k].scanTile(s.xyz[t:te], s.ref[t:te], t)
		}
	}
	return true
}

// mergeParts writes to idx and h, for each observation i, the best of its
// splits parts' answers, held at [i*splits, (i+1)*splits) of pIdx and pH.
// Parts are in reference order and only a smaller haversine replaces the
// best, so ties keep the lowest index.
func mergeParts(splits int, pIdx []int, pH []float64, idx []int, h []float64) {
	for i := range len(pIdx) / splits {
		bi, bh := pIdx[i*splits], pH[i*splits]
		for sp := 1; sp < splits; sp++ {
			if v := pH[i*splits+sp]; v < bh {
				bi, bh = pIdx[i*splits+sp], v
			}
		}
		idx[i], h[i] = bi, bh
	}
}

// query is one observation being searched and its running best.
type query struct {
	vec   [3]float64 // unit vector of p
	p     orb.Point
	bestC float64 // smallest squared chord so far
	bestH float64 // smallest haversine so far
	best  int     // index of the reference at bestH, or -1
}

func newQuery(p orb.Point) query {
	return query{vec: unit(p), p: p, bestC: math.Inf(1), bestH: math.Inf(1), best: -1}
}

// scanTile updates q's running best over a tile of references starting at
// index base.
func (q *query) scanTile(xyz [][3]float64, ref []orb.Point, base int) {
	o, op := q.vec, q.p
	bc, bh, bi := q.bestC, q.bestH, q.best
	for j := range xyz {
		v := &xyz[j]
		dx, dy, dz := o[0]-v[0], o[1]-v[1], o[2]-v[2]
		c := dx*dx + dy*dy + dz*dz
		if c <= bc+chordMargin {
			bc = min(bc, c)
			if hj := hav(op, ref[j]); hj < bh {
				bh, bi = hj, base+j
			}
		}
	}
	q.bestC, q.bestH, q.best = bc, bh, bi
}

// BruteForce returns, for every observation, the index of the nearest
// reference by float64 haversine (the lowest index on exact ties) and the
// central angle to it in radians. It compares every pair, in parallel over
// runtime.GOMAXPROCS(0) goroutines, and returns ctx.Err() if ctx is done
// first.
func BruteForce(ctx context.Context, obs, ref []orb.Point) ([]uint32, []float64, error) {
	return bruteForce(ctx, obs, ref, runtime.GOMAXPROCS(0))
}

func bruteForce(ctx context.Context, obs, ref []orb.Point, workers int) ([]uint32, []float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	s, err := newSearcher(ref, workers)
	if err != nil {
		return nil, nil, fmt.Errorf("brute force: %w", err)
	}
	if err := checkFinite("observation", obs); err != nil {
		return nil, nil, fmt.Errorf("brute force: %w", err)
	}
	stop, release := stopFlag(ctx)
	defer release()

	index, dist := make([]uint32, len(obs)), make([]float64, len(obs))
	bIdx, bH := make([]int, min(batchSize, len(obs))), make([]float64, min(batchSize, len(obs)))
	for lo := 0; lo < len(obs); lo += batchSize {
		hi := min(lo+batchSize, len(obs))
		if !s.nearest(stop, obs[lo:hi], bIdx[:hi-lo], bH[:hi-lo]) {
			return nil, nil, ctx.Err()
		}
		for k := range hi - lo {
			index[lo+k] = uint32(bIdx[k])
			dist[lo+k] = angle(bH[k])
		}
	}
	return index, dist, nil
}

// angle turns a haversine into a central angle in radians.
func angle(h float64) float64 { return 2 * math.Asin(math.Sqrt(h)) }
