package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/geoknn/geoknn/internal/index"
)

// TestPoolScanLayout holds the offsets the assembly (cpu_cells_pool_amd64.s,
// cpu_scan_amd64.s) reads.
func TestPoolScanLayout(t *testing.T) {
	var s faceSurvivor
	var c facePoolCell
	var sp faceSpots
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"faceSurvivor size", unsafe.Sizeof(s), 48},
		{"faceSurvivor.dots", unsafe.Offsetof(s.dots), 16},
		{"facePoolCell.beaten", unsafe.Offsetof(c.beaten), 384},
		{"facePoolCell.need2", unsafe.Offsetof(c.need2), 512},
		{"faceSpots.uf", unsafe.Offsetof(sp.uf), 16},
		{"faceSpots.vf", unsafe.Offsetof(sp.vf), 48},
		{"secondFilterAVX2's corner stride", faceKeptMax * 8, 288},
		{"poolK's faceDomEps bits", uintptr(math.Float64bits(faceDomEps)), 0x3d719799812dea11},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, the assembly reads %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestPoolScanTwin checks the vector scans of a tile's pool against their
// Go twins: the same chords, nearest place, first-filter survivors and
// second-filter places, on pools around random cells with equally near
// references among them.
func TestPoolScanTwin(t *testing.T) {
	if !index.HaveAVX2FMA {
		t.Skip("no AVX2 on this CPU: only the Go scans run")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		side := 4 + r.IntN(200)
		c := faceCell{f: r.IntN(6), i: r.IntN(side), j: r.IntN(side), n: side}
		g := c.geometry()
		pl := twinPool(r, &g, 4*(1+r.IntN(80)))
		pl.d2 = make([]float64, len(pl.id))
		best, at := poolChords(&g.centre, pl.x, pl.y, pl.z, pl.d2)
		d2 := make([]float64, len(pl.id))
		gBest, gAt := poolChordsGo(&g.centre, pl.x, pl.y, pl.z, d2)
		if best != gBest || at != gAt || !slices.Equal(pl.d2, d2) {
			t.Fatalf("trial %d: chords: AVX2 %g at %d, Go %g at %d (chords equal: %v)", trial, best, at, gBest, gAt, slices.Equal(pl.d2, d2))
		}
		q := r.IntN(len(pl.id))
		dq := g.cornerDotsOf(pl.x[q], pl.y[q], pl.z[q])
		var cell facePoolCell
		cell.set(&g, &dq, slices.Max(d2[:len(d2)-1])*r.Float64()*1.2)
		out, gOut := make([]int32, len(d2)), make([]int32, len(d2))
		n, gn := poolSurvivors(&cell, pl.x, pl.y, pl.z, pl.d2, out), poolSurvivorsGo(&cell, pl.x, pl.y, pl.z, d2, gOut)
		if !slices.Equal(out[:n], gOut[:gn]) {
			t.Fatalf("trial %d: survivors: AVX2 %v, Go %v", trial, out[:n], gOut[:gn])
		}
		surv := twinSurvivors(&g, pl, d2)
		var kept [4][faceKeptMax]float64
		var at1, at2 [faceKeptMax]int32
		for _, stop := range []int{1, 5, faceCap + 1, faceKeptMax} {
			m1, m2 := secondFilterPlaces(surv, stop, &kept, &at1), secondFilterGo(surv, stop, &at2)
			if !slices.Equal(at1[:m1], at2[:m2]) {
				t.Fatalf("trial %d stop %d: second filter: AVX2 %v, Go %v", trial, stop, at1[:m1], at2[:m2])
			}
		}
	}
}

// twinPool is n references around the cell of geometry g, within a few
// of its widths, some repeated (equally near), padded as gather pads.
func twinPool(r *rand.Rand, g *faceGeom, n int) *facePool {
	pl := &facePool{}
	for k := range n - 1 {
		if k > 0 && r.IntN(8) == 0 {
			j := r.IntN(k)
			pl.x, pl.y, pl.z = append(pl.x, pl.x[j]), append(pl.y, pl.y[j]), append(pl.z, pl.z[j])
		} else {
			s := 3 * g.alpha
			x, y, z := g.centre[0]+s*r.NormFloat64(), g.centre[1]+s*r.NormFloat64(), g.centre[2]+s*r.NormFloat64()
			h := 1 / math.Sqrt(x*x+y*y+z*z)
			pl.x, pl.y, pl.z = append(pl.x, x*h), append(pl.y, y*h), append(pl.z, z*h)
		}
		pl.id = append(pl.id, uint32(k))
	}
	pl.x, pl.y, pl.z, pl.id = append(pl.x, facePoolPad), append(pl.y, facePoolPad), append(pl.z, facePoolPad), append(pl.id, math.MaxUint32)
	return pl
}

// twinSurvivors is the pool's references (but the padding) as a cell's
// survivors, nearest its centre first.
func twinSurvivors(g *faceGeom, pl *facePool, d2 []float64) []faceSurvivor {
	var s []faceSurvivor
	for k := range len(pl.id) - 1 {
		s = append(s, faceSurvivor{id: pl.id[k], d2: d2[k], dots: g.cornerDotsOf(pl.x[k], pl.y[k], pl.z[k])})
	}
	b := &faceBuilder{surv: s}
	b.sortSurvivors()
	return b.surv
}

// TestTop4MatchesTop checks the vector cell lookup against top, bit for
// bit: random unit vectors, vectors on the cube's edges and corners
// (equal coordinates, where the face's choice breaks ties) and on cell
// boundaries, for sides from 1 to maxCellsSide.
func TestTop4MatchesTop(t *testing.T) {
	if !index.HaveAVX2FMA {
		t.Skip("no AVX2 on this CPU: only top runs")
	}
	r := rand.New(rand.NewPCG(7, 8))
	s := 1 / math.Sqrt(3)
	edges := [][3]float64{{s, s, s}, {-s, s, -s}, {math.Sqrt2 / 2, -math.Sqrt2 / 2, 0}, {0, math.Sqrt2 / 2, math.Sqrt2 / 2},
		{1, 0, 0}, {0, -1, 0}, {0, 0, 1}, {-math.Sqrt2 / 2, 0, -math.Sqrt2 / 2}}
	for trial := range 20000 {
		side := 1 + r.IntN(index.MaxCellsSide)
		if trial%4 == 0 {
			side = index.MaxCellsSide
		}
		fc := &faceIndex{side: side}
		var u [12]float64
		for e := range 4 {
			var p [3]float64
			switch trial % 3 {
			case 0:
				p = edges[r.IntN(len(edges))]
			case 1: // on a cell boundary of a random face
				f, b := faceCell{f: r.IntN(6), i: r.IntN(side), j: r.IntN(side), n: side}, 2/float64(side)
				p = f.point(-1+float64(f.i)*b, -1+(float64(f.j)+r.Float64())*b)
			default:
				x, y, z := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
				h := 1 / math.Sqrt(x*x+y*y+z*z)
				p = [3]float64{x * h, y * h, z * h}
			}
			u[e], u[4+e], u[8+e] = p[0], p[1], p[2]
		}
		var got, want faceSpots
		fc.top4(&u, &got)
		fc.top4Go(&u, &want)
		if got != want {
			t.Fatalf("trial %d (side %d, %v): AVX2 %+v, Go %+v", trial, side, u, got, want)
		}
	}
}
