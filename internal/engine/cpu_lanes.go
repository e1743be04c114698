package engine

import "math"

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
	if haveAVX2FMA && n >= 4 {
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

// result folds observation k's lanes: the largest dot product, the
// largest of the rest (the winning lane's second and the other lanes'
// bests) and the winner's tile index.
func (st *lanes3) result(k int) (best, runup float64, idx int32) {
	w := 0
	for l := 1; l < 4; l++ {
		if st.best[k][l] > st.best[k][w] {
			w = l
		}
	}
	runup = st.second[k][w]
	for l := range 4 {
		if l != w {
			runup = max(runup, st.best[k][l])
		}
	}
	return st.best[k][w], runup, int32(st.idx[k][w])
}
