//go:build amd64 && !purego

package cpu

import "github.com/geoknn/geoknn/internal/index"

//go:noescape
func poolChordsAVX2(p *[3]float64, x, y, z, d2 *float64, n int, least *[4]float64, at *[4]int64)

//go:noescape
func secondFilterAVX2(surv *faceSurvivor, n, stop int, kept *[4][faceKeptMax]float64, out *int32) int

//go:noescape
func poolSurvivorsAVX2(c *facePoolCell, x, y, z, d2 *float64, n int, out *int32) int

// poolChords writes the squared chords from p to the pool's references
// (x, y, z, a multiple of four) into d2 and returns the least and its
// first place, through poolChordsAVX2 where the CPU has AVX2.
func poolChords(p *[3]float64, x, y, z, d2 []float64) (float64, int) {
	if !index.HaveAVX2FMA || len(d2) == 0 || len(d2)%4 != 0 {
		return poolChordsGo(p, x, y, z, d2)
	}
	n := len(d2)
	x, y, z = x[:n], y[:n], z[:n]
	var least [4]float64
	var at [4]int64
	poolChordsAVX2(p, &x[0], &y[0], &z[0], &d2[0], n, &least, &at)
	best, k := least[0], at[0]
	for l := 1; l < 4; l++ {
		if least[l] < best || (least[l] == best && at[l] < k) {
			best, k = least[l], at[l]
		}
	}
	return best, int(k)
}

// secondFilterPlaces is secondFilterGo through secondFilterAVX2 where the
// CPU has AVX2, kept its scratch.
func secondFilterPlaces(surv []faceSurvivor, stop int, kept *[4][faceKeptMax]float64, at *[faceKeptMax]int32) int {
	if !index.HaveAVX2FMA || len(surv) == 0 {
		return secondFilterGo(surv, stop, at)
	}
	return secondFilterAVX2(&surv[0], len(surv), min(stop, faceKeptMax), kept, &at[0])
}

// poolSurvivors writes into out the places of the pool's references (a
// multiple of four, their chords from the cell's centre in d2) that pass
// the cell's first filter c, in order, and returns how many; through
// poolSurvivorsAVX2 where the CPU has AVX2.
func poolSurvivors(c *facePoolCell, x, y, z, d2 []float64, out []int32) int {
	if !index.HaveAVX2FMA || len(d2) == 0 || len(d2)%4 != 0 {
		return poolSurvivorsGo(c, x, y, z, d2, out)
	}
	n := len(d2)
	x, y, z, out = x[:n], y[:n], z[:n], out[:n]
	return poolSurvivorsAVX2(c, &x[0], &y[0], &z[0], &d2[0], n, &out[0])
}
