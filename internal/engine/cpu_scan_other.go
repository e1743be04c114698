//go:build !amd64 || purego

package engine

func scan3(s *cpuScratch, i int, t refTile) { scan3Generic(s, i, t) }
