package index

import "slices"

// The k-d tree's top splits select the median of many references while
// the workers that build the subtrees below wait for them: selectNthMany
// shares the selections of one level's nodes among the team's workers.
// For each node, a sample of the keys brackets the median in a band of
// about an eighth of its references; one pass, in kdSelectChunks chunks a
// node, moves the references below the band, in it and above it into
// place, and only the band is selected serially, the nodes' bands at
// once. The chunks do not depend on the workers, so neither does the
// tree.

// KDParallelMin is the fewest references whose selection is made in
// chunks.
const KDParallelMin = 1 << 14

const (
	kdSelectChunks = 16   // a selection's chunks: at most its workers
	kdSample       = 1024 // keys sampled to bracket the median
	kdSampleBand   = 64   // sampled keys on either side of the median's rank: four of the sample's deviations
)

// kdSelectJob is one node's selection for selectNthMany: pts reordered so
// that nth holds the reference that sorting by axis would put there,
// through scratch (as long as pts).
type kdSelectJob struct {
	pts       []KDPoint
	scratch   KDColumns
	nth, axis int
	// The pass: the band's keys, the chunks' length, and each chunk's
	// references below, in and above the band, then its first places.
	lo, hi      float64
	chunk       int
	counts      [][3]int
	below, band int
	whole       bool // selected serially: too few references, or the sample missed the median
}

// kdChunk is chunk c of job j.
type kdChunk struct{ j, c int }

// SelectNthParallel is selectNth with its passes run through run: the
// same ordering around nth (smaller keys before it, larger after), not
// the same order.
func SelectNthParallel(pts []KDPoint, scratch KDColumns, nth, axis int, run blockRunner) {
	selectNthMany([]kdSelectJob{{pts: pts, scratch: scratch, nth: nth, axis: axis}}, run)
}

// selectNthMany makes every job's selection, each pass of all of them one
// call of run: a job of fewer than kdParallelMin references is selected
// by selectNth, any other as selectNthParallel selects it.
func selectNthMany(jobs []kdSelectJob, run blockRunner) {
	run(len(jobs), 1, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			jobs[j].open()
		}
	})
	var chunks []kdChunk
	for j := range jobs {
		for c := range len(jobs[j].counts) {
			chunks = append(chunks, kdChunk{j, c})
		}
	}
	run(len(chunks), 1, func(_, lo, hi int) {
		for _, k := range chunks[lo:hi] {
			jobs[k.j].count(k.c)
		}
	})
	for j := range jobs {
		jobs[j].place()
	}
	run(len(chunks), 1, func(_, lo, hi int) {
		for _, k := range chunks[lo:hi] {
			jobs[k.j].scatter(k.c)
		}
	})
	run(len(chunks), 1, func(_, lo, hi int) {
		for _, k := range chunks[lo:hi] {
			jobs[k.j].gather(k.c)
		}
	})
	run(len(jobs), 1, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			jobs[j].finish()
		}
	})
}

// open brackets the median and cuts the job into chunks, or marks it
// whole.
func (jb *kdSelectJob) open() {
	n := len(jb.pts)
	if jb.whole = n < KDParallelMin; jb.whole {
		return
	}
	jb.lo, jb.hi = sampleBand(jb.pts, jb.nth, jb.axis)
	jb.chunk = (n + kdSelectChunks - 1) / kdSelectChunks
	jb.counts = make([][3]int, (n+jb.chunk-1)/jb.chunk)
}

// span is chunk c's references.
func (jb *kdSelectJob) span(c int) (from, to int) {
	return c * jb.chunk, min((c+1)*jb.chunk, len(jb.pts))
}

// count counts chunk c's references below, in and above the band.
func (jb *kdSelectJob) count(c int) {
	from, to := jb.span(c)
	n := &jb.counts[c]
	for k := from; k < to; k++ {
		n[bandOf(jb.pts[k].C[jb.axis], jb.lo, jb.hi)]++
	}
}

// place makes the counts each chunk's first places below, in and above
// the band; where the band misses the median, the job is left whole.
func (jb *kdSelectJob) place() {
	if jb.whole {
		return
	}
	var total [3]int
	for _, c := range jb.counts {
		for p := range 3 {
			total[p] += c[p]
		}
	}
	jb.below, jb.band = total[0], total[1]
	if jb.nth < jb.below || jb.nth >= jb.below+jb.band { // the sample missed the median
		jb.whole = true
		return
	}
	next := [3]int{0, jb.below, jb.below + jb.band}
	for c := range jb.counts {
		n := jb.counts[c]
		jb.counts[c] = next
		for p := range 3 {
			next[p] += n[p]
		}
	}
}

// scatter moves chunk c's references to their places in scratch.
func (jb *kdSelectJob) scatter(c int) {
	if jb.whole {
		return
	}
	from, to := jb.span(c)
	at := jb.counts[c]
	for k := from; k < to; k++ {
		p := bandOf(jb.pts[k].C[jb.axis], jb.lo, jb.hi)
		jb.scratch.set(at[p], &jb.pts[k])
		at[p]++
	}
}

// gather copies chunk c's span of scratch back.
func (jb *kdSelectJob) gather(c int) {
	if jb.whole {
		return
	}
	from, to := jb.span(c)
	for k := from; k < to; k++ {
		jb.pts[k] = jb.scratch.at(k)
	}
}

// finish selects within the band, or the whole job.
func (jb *kdSelectJob) finish() {
	if jb.whole {
		SelectNth(jb.pts, jb.nth, jb.axis)
		return
	}
	SelectNth(jb.pts[jb.below:jb.below+jb.band], jb.nth-jb.below, jb.axis)
}

// blockRunner calls fn(w, lo, hi) for every block [lo, hi) of size block of
// [0, n): a team's Blocks, or serialBlocks.
type blockRunner func(n, block int, fn func(w, lo, hi int))

// serialBlocks is a blockRunner on the calling goroutine.
func serialBlocks(n, block int, fn func(w, lo, hi int)) {
	for lo := 0; lo < n; lo += block {
		fn(0, lo, min(lo+block, n))
	}
}

// bandOf is 0 below lo, 1 from lo to hi, 2 above hi.
func bandOf(key, lo, hi float64) int {
	switch {
	case key < lo:
		return 0
	case key > hi:
		return 2
	}
	return 1
}

// sampleBand is the keys kdSampleBand sampled ranks either side of nth's
// rank among kdSample keys at equal steps.
func sampleBand(pts []KDPoint, nth, axis int) (lo, hi float64) {
	n := len(pts)
	keys := make([]float64, kdSample)
	for s := range keys {
		keys[s] = pts[s*n/kdSample].C[axis]
	}
	slices.Sort(keys)
	r := nth * kdSample / n
	return keys[max(0, r-kdSampleBand)], keys[min(kdSample-1, r+kdSampleBand)]
}
