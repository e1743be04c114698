package simulator

import (
	"fmt"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/sphere"
)

// Part is a range [Lo, Hi) of a simulation's observations: one process's
// share of a simulation split by observation (an MPI rank of knn simulate
// --mpi). A run of a part holds and queries those observations alone,
// replaces those of them that the whole simulation replaces, by the same
// fresh points, and moves every reference as the whole simulation does:
// its answers are the whole simulation's for its observations, bit for
// bit, and its Replaced and Changed counts summed over the parts are the
// whole simulation's.
type Part struct{ Lo, Hi int }

// set reports whether p names a part (Hi > 0).
func (p Part) set() bool { return p.Hi > 0 }

// checkPart checks a part of n observations with init of its initial
// points (none: generated).
func checkPart(p Part, n int, init geoknn.Points) error {
	if p.Lo < 0 || p.Lo > p.Hi || p.Hi > n {
		return fmt.Errorf("simulator: part [%d, %d) of %d observations", p.Lo, p.Hi, n)
	}
	if init.Len() > 0 && init.Len() != p.Hi-p.Lo {
		return fmt.Errorf("simulator: part [%d, %d) given %d initial observations", p.Lo, p.Hi, init.Len())
	}
	if init.Len() > 0 {
		return init.Check("simulator: initial observations")
	}
	return nil
}

// partColumns are the part's initial observations: its own points given,
// or its range of the generated set.
func partColumns(cfg Config) (lat, lon []float64, err error) {
	p := cfg.Part
	if cfg.InitObs.Len() > 0 {
		return initColumns(cfg.InitObs, 0, cfg.ObsGen, cfg.Seed)
	}
	if at, ok := sphere.IndexedByName(genName(cfg.ObsGen)); ok {
		lat, lon = make([]float64, p.Hi-p.Lo), make([]float64, p.Hi-p.Lo)
		parallel.Blocks(len(lat), sphere.BlockSize, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				lat[i], lon[i] = at(uint64(p.Lo+i), cfg.Seed)
			}
		})
		return lat, lon, nil
	}
	// Drawn in blocks whose streams follow from the first point on: the
	// whole set, then the part's range kept.
	all, allLon, err := initColumns(geoknn.Points{}, cfg.Obs, cfg.ObsGen, cfg.Seed)
	if err != nil {
		return nil, nil, err
	}
	return append([]float64(nil), all[p.Lo:p.Hi]...), append([]float64(nil), allLon[p.Lo:p.Hi]...), nil
}

// partReplacer draws the whole simulation's replacements that fall in a
// part: for each block the part touches, the slots the whole simulation
// replaces (sphere.Replacement) and their fresh points, as the engine's
// session draws them for an indexed generator (PointAt) and the replacer
// for the others (a block's points from the generator's block form).
type partReplacer struct {
	*replacer
	n     int // the whole simulation's observations
	part  Part
	point sphere.Indexed // nil: the replacer's block generator
}

// draw fills r with step's replacements in the part, slots counted from
// the part's first observation.
func (p *partReplacer) draw(step int, r *replacement) {
	rep := sphere.Replacement{Fraction: p.frac, Seed: p.seed, Step: uint64(step), Point: p.point}
	r.slots, r.newLat, r.newLon = r.slots[:0], r.newLat[:0], r.newLon[:0]
	if p.part.Lo == p.part.Hi {
		return
	}
	var set [sphere.ReplaceBlockSize / 64]uint64
	var slots []uint32
	var blockLat, blockLon []float64
	for b := p.part.Lo / sphere.ReplaceBlockSize; b <= (p.part.Hi-1)/sphere.ReplaceBlockSize; b++ {
		var first int
		first, slots = rep.BlockSlots(b, p.n, set[:], slots[:0])
		if p.point == nil {
			blockLat, blockLon = grown(blockLat, len(slots)), grown(blockLon, len(slots))
			rep.BlockPoints(p.gen, b, blockLat, blockLon)
		}
		for j, s := range slots {
			if int(s) < p.part.Lo || int(s) >= p.part.Hi {
				continue
			}
			lat, lon := p.pointOf(rep, first+j, blockLat, blockLon, j)
			r.slots, r.newLat, r.newLon = append(r.slots, s-uint32(p.part.Lo)), append(r.newLat, lat), append(r.newLon, lon)
		}
	}
}

// pointOf is the fresh point of the t-th replaced observation, the j-th
// of its block.
func (p *partReplacer) pointOf(rep sphere.Replacement, t int, blockLat, blockLon []float64, j int) (float64, float64) {
	if p.point != nil {
		return rep.PointAt(t)
	}
	return blockLat[j], blockLon[j]
}

// grown is s with length n.
func grown(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
