//go:build !amd64 || purego

package engine

func scan3(s *cpuScratch, i int, t refTile) { scan3Generic(s, i, t) }

const haveAVX2FMA = false

func lanes3AVX2(o *[9]float64, rx, ry, rz *float64, groups int, st *lanes3) {}
