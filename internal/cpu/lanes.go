package cpu

import (
	"math"

	"github.com/geoknn/geoknn/internal/index"
)

// lanes3 is the state of three observations ranked against a tile lane by
// lane, four lanes as in one AVX2 register (lane l sees the tile's
// references l, l+4, ...): the largest dot product, the second largest and
// the tile index of the largest. Keeping a lane's best and second with min,
// max and a blend instead of a branch suits tiles of a few dozen
// references, where nearly every group of four changes some best.
type lanes3 struct {
	best, second [3][4]float64
	idx          [3][4]int64
}

func (st *lanes3) reset() {
	for k := range 3 {
		for l := range 4 {
			st.best[k][l], st.second[k][l], st.idx[k][l] = math.Inf(-1), math.Inf(-1), 0
		}
	}
}

// rankLanes3 sets st to observations o (x0 y0 z0 x1 ...) ranked against
// all of t: the whole groups of four in lanes3AVX2 where the CPU has it (it
// starts from the reset state itself), the rest here with the same fused
// arithmetic and rules, so both give the same state.
func rankLanes3(st *lanes3, o *[9]float64, t refTile) {
	n := len(t.x)
	whole := 0
	if index.HaveAVX2FMA && n >= 4 {
		whole = n / 4 * 4
		lanes3AVX2(o, &t.x[0], &t.y[0], &t.z[0], n/4, st)
	} else {
		st.reset()
	}
	rankLanes3From(st, o, t, whole)
}

// rankLanes3From ranks references [from, len(t.x)) of t in Go.
func rankLanes3From(st *lanes3, o *[9]float64, t refTile, from int) {
	n := len(t.x)
	rx, ry, rz := t.x, t.y[:n], t.z[:n]
	for j := from; j < n; j++ {
		l := j & 3
		for k := range 3 {
			d := math.FMA(o[3*k], rx[j], math.FMA(o[3*k+1], ry[j], o[3*k+2]*rz[j]))
			b := st.best[k][l]
			st.second[k][l] = max(st.second[k][l], min(b, d))
			if d > b {
				st.best[k][l], st.idx[k][l] = d, int64(j)
			}
		}
	}
}

// result folds observation k's lanes (foldLanes).
func (st *lanes3) result(k int) (best, runup float64, idx int32) {
	best, runup, i := foldLanes(&st.best[k], &st.second[k], &st.idx[k])
	return best, runup, int32(i)
}

// foldLanes is one observation's ranking from its four lanes: the largest
// dot product, the largest of the rest (the winning lane's second and the
// other lanes' bests) and the winner's index (the first lane on equal
// bests).
func foldLanes(best, second *[4]float64, idx *[4]int64) (float64, float64, int64) {
	w := 0
	for l := 1; l < 4; l++ {
		if best[l] > best[w] {
			w = l
		}
	}
	runup := second[w]
	for l := range 4 {
		if l != w {
			runup = max(runup, best[l])
		}
	}
	return best[w], runup, idx[w]
}

// lanes1 is lanes3 for one observation ranked against a face cell's list
// (faceBlock l's lane k holds candidate 4l + k).
type lanes1 struct {
	best, second [4]float64
	idx          [4]int64
}

// rankLanes1 ranks observation o (x, y, z) against blocks: the largest dot
// product, the largest of the rest and the winner's place in the list,
// through lanes1AVX2 where the CPU has it, else the same rules in Go.
func rankLanes1(o *[3]float64, blocks []faceBlock) (best, runup float64, idx int) {
	if index.HaveAVX2FMA {
		return lanes1AVX2(o, &blocks[0], len(blocks))
	}
	var st lanes1
	rankLanes1Go(&st, o, blocks)
	return st.result()
}

// rankLanes1Go is lanes1AVX2 in Go, with the same fused arithmetic.
func rankLanes1Go(st *lanes1, o *[3]float64, blocks []faceBlock) {
	for l := range 4 {
		st.best[l], st.second[l], st.idx[l] = math.Inf(-1), math.Inf(-1), 0
	}
	for s := range blocks {
		b := &blocks[s]
		for l := range 4 {
			d := math.FMA(o[0], b.x[l], math.FMA(o[1], b.y[l], o[2]*b.z[l]))
			if math.IsNaN(d) { // padding
				continue
			}
			best := st.best[l]
			st.second[l] = max(st.second[l], min(best, d))
			if d > best {
				st.best[l], st.idx[l] = d, int64(4*s+l)
			}
		}
	}
}

// result folds the lanes: the largest dot product, the largest of the rest
// and the winner's place in the list.
func (st *lanes1) result() (best, runup float64, idx int) {
	best, runup, i := foldLanes(&st.best, &st.second, &st.idx)
	return best, runup, int(i)
}
