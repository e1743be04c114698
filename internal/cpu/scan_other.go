//go:build !amd64 || purego

package cpu

func scan3(s *cpuScratch, i int, t refTile) { scan3Generic(s, i, t) }

func lanes3AVX2(o *[9]float64, rx, ry, rz *float64, groups int, st *lanes3) {}

func lanes1AVX2(o *[3]float64, blocks *faceBlock, n int) (best, runup float64, idx int) {
	return 0, 0, 0
}

func faceTop4AVX2(u *[12]float64, side int, half float64, s *faceSpots) {}

func prefetchBlocks(p *faceBlock, n int) {}

func prefetchHead(p *faceHead) {}
