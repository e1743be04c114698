package gpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/enginetest"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/sphere"
)

// The face-cell query answers as the CPU does where its cells are hard:
// observations and references on the cube's seams and cell edges, ties
// between mirror images, near duplicates, float32 columns, clustered
// references; and references too crowded for the lists leave the grid or
// the tree to answer.
func TestGPUCells(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	rng := rand.New(rand.NewPCG(21, 22))
	const nref = 1 << 13
	side := index.CellsSideFor(1<<17, nref, false)
	seams := enginetest.SpherePoints(nref, 23)
	edge := enginetest.OnFaceEdges(nref/4, side, rng)
	copy(seams.Lat64, edge.Lat64)
	copy(seams.Lon64, edge.Lon64)
	obs := enginetest.SpherePoints(1<<17, 24)
	edgeObs := enginetest.OnFaceEdges(1<<16, side, rng)
	copy(obs.Lat64, edgeObs.Lat64)
	copy(obs.Lon64, edgeObs.Lon64)

	mirror := enginetest.SpherePoints(nref, 25) // pairs mirrored about the equator, observations on it: ties
	for i := 0; i < nref/2; i += 2 {
		mirror.Lat64[i+1], mirror.Lon64[i+1] = -mirror.Lat64[i], mirror.Lon64[i]
	}
	onEquator := enginetest.SpherePoints(1<<16, 26)
	for i := range onEquator.Lat64[:1<<15] {
		onEquator.Lat64[i], onEquator.Lon64[i] = 0, mirror.Lon64[2*(i%(nref/4))]
	}
	nearDup := enginetest.SpherePoints(nref, 27) // pairs 1e-9 rad apart (few enough that the plan stays a grid)
	for i := 0; i < nref; i += 32 {
		nearDup.Lat64[i+1], nearDup.Lon64[i+1] = nearDup.Lat64[i]+1e-9, nearDup.Lon64[i]
	}
	r32, o32 := enginetest.SpherePoints(nref, 28), enginetest.SpherePoints(1<<16, 29)
	poles := index.Radians64(make([]float64, nref), make([]float64, nref)) // uniform in degrees: crowded near the poles
	for i := range poles.Lat64 {
		poles.Lat64[i], poles.Lon64[i] = (rng.Float64()-0.5)*math.Pi, (rng.Float64()*2-1)*math.Pi
	}
	clat, clon := make([]float64, nref), make([]float64, nref)
	if err := sphere.ClusteredRadians(nref, 35, 64, 200, clat, clon); err != nil {
		t.Fatal(err)
	}
	crowded := enginetest.SpherePoints(2000, 30)
	for range 20000 {
		crowded.Lat64 = append(crowded.Lat64, 0.4+1e-4*rng.NormFloat64())
		crowded.Lon64 = append(crowded.Lon64, 1.1+1e-4*rng.NormFloat64())
	}
	for _, tc := range []struct {
		name     string
		obs, ref index.Points
		cells    bool // the face cells must answer (else the plan decides)
	}{
		{"seams and cell edges", obs, seams, true},
		{"mirror ties", onEquator, mirror, true},
		{"near duplicates", enginetest.SpherePoints(1<<16, 31), nearDup, true},
		{"float32 columns", points32(o32), points32(r32), true},
		{"crowded poles: split cells", enginetest.OnFaceEdges(1<<16, side, rng), poles, true},
		{"clustered references (a k-d tree plan)", enginetest.SpherePoints(1<<16, 36), index.Radians64(clat, clon), true},
		{"crowded references", enginetest.SpherePoints(1<<16, 32), crowded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := gridMatchesBrute(t, g, tc.obs, tc.ref, 1<<15)
			if tc.cells && !strings.Contains(st.Note, "face cells 6 x") {
				t.Errorf("planned %q, want the face cells", st.Note)
			}
		})
	}
}

// Cells too coarse for their references split into finer levels; cells
// far from references crowded into one place refuse the lists (the run
// then answers through the grid).
func TestGPUCellsLevels(t *testing.T) {
	g := openGPU(t, DeviceMemory)
	d := g.devs[0]
	one := enginetest.SpherePoints(8192, 34)
	for i := range one.Lat64 {
		one.Lat64[i], one.Lon64[i] = 0.3+1e-3*one.Lat64[i], 0.2+1e-3*one.Lon64[i]
	}
	for _, tc := range []struct {
		name   string
		ref    index.Points
		side   int
		levels int // -1: refused, 0: none split, 1: some split
	}{
		{"fine", enginetest.SpherePoints(8192, 33), 64, 0},
		{"coarse: split", enginetest.SpherePoints(8192, 33), 4, 1},
		{"one crowded place: refused", one, 64, -1},
	} {
		refs := index.PrepareRefs(tc.ref)
		err := d.onThread(func() error {
			stream := d.slots[0].stream
			if err := d.refs.stage(d.drv, stream, refs, index.Points{}); err != nil {
				return err
			}
			shape := index.NewGridShape(32)
			if err := d.refs.buildGrid(d.drv, d.grid, stream, shape, refs.N); err != nil {
				return err
			}
			ok, err := d.refs.cells.build(d.drv, d.cells, stream, &d.refs, shape, refs.N, tc.side)
			if err != nil {
				return err
			}
			c := &d.refs.cells
			t.Logf("%s: %s", tc.name, c.note())
			if want := tc.levels >= 0; ok != want || (c.side > 0) != want || (want && min(c.levels, 1) != tc.levels) {
				t.Errorf("%s: built %v (side %d, %d levels), want %d levels", tc.name, ok, c.side, c.levels, tc.levels)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
