//go:build !amd64 || purego

package engine

func scan3(ox, oy, oz, best, runup []float64, idx []int32, rx, ry, rz []float64, base int32) {
	scan3Generic(ox, oy, oz, best, runup, idx, rx, ry, rz, base)
}
