//go:build amd64 && !purego

package cpu

import (
	"math"

	"github.com/geoknn/geoknn/internal/index"
)

//go:noescape
func dot3AVX2(o *[9]float64, s *[3]float64, rx, ry, rz *float64, n int) int

// scan3 is scan3Generic with the dot products four references at a time in
// AVX2 where the CPU has it. The vector loop only tests each observation's
// dot products against its runner-up; the rare group of four that beats one
// is ranked here, with the same fused arithmetic, so the two paths agree.
func scan3(sc *cpuScratch, i int, t refTile) {
	if !index.HaveAVX2FMA {
		scan3Generic(sc, i, t)
		return
	}
	ox, oy, oz, best, runup, idx := sc.x[i:i+3], sc.y[i:i+3], sc.z[i:i+3], sc.best[i:i+3], sc.runup[i:i+3], sc.idx[i:i+3]
	rx, ry, rz, base := t.x, t.y, t.z, t.base
	_, _, _, _, _, _ = ox[2], oy[2], oz[2], best[2], runup[2], idx[2]
	o := [9]float64{ox[0], oy[0], oz[0], ox[1], oy[1], oz[1], ox[2], oy[2], oz[2]}
	n := len(rx)
	ry, rz = ry[:n], rz[:n]
	for j := 0; j < n; {
		if n-j >= 4 {
			s := [3]float64{runup[0], runup[1], runup[2]}
			j += dot3AVX2(&o, &s, &rx[j], &ry[j], &rz[j], n-j)
		}
		for e := min(j+4, n); j < e; j++ {
			for k := 0; k < 3; k++ {
				d := math.FMA(o[3*k], rx[j], math.FMA(o[3*k+1], ry[j], o[3*k+2]*rz[j]))
				if d > runup[k] {
					if d > best[k] {
						runup[k], best[k], idx[k] = best[k], d, base+int32(j)
					} else {
						runup[k] = d
					}
				}
			}
		}
	}
}

//go:noescape
func lanes3AVX2(o *[9]float64, rx, ry, rz *float64, groups int, st *lanes3)

//go:noescape
func lanes1AVX2(o *[3]float64, blocks *faceBlock, n int) (best, runup float64, idx int)

//go:noescape
func faceTop4AVX2(u *[12]float64, side int, half float64, s *faceSpots)

//go:noescape
func prefetchBlocks(p *faceBlock, n int)

//go:noescape
func prefetchHead(p *faceHead)
