//go:build !amd64 || purego

package cpu

func poolChords(p *[3]float64, x, y, z, d2 []float64) (float64, int) {
	return poolChordsGo(p, x, y, z, d2)
}

func secondFilterPlaces(surv []faceSurvivor, stop int, _ *[4][faceKeptMax]float64, at *[faceKeptMax]int32) int {
	return secondFilterGo(surv, stop, at)
}

func poolSurvivors(c *facePoolCell, x, y, z, d2 []float64, out []int32) int {
	return poolSurvivorsGo(c, x, y, z, d2, out)
}
