package simulator

import (
	"slices"
	"testing"

	"github.com/geoknn/geoknn/sphere"
)

// The parts of a simulation, run apart, answer as the whole does: their
// answers side by side are the whole's at every step, the references move
// alike, and the replaced and changed counts add up; for an indexed
// generator (made inside the session when whole) and for clustered
// points, with parts whose edges cut replacement blocks, one empty; and
// with none replaced, where every part steps inside its session.
func TestPartsAsWhole(t *testing.T) {
	for _, tc := range []struct {
		gen     string
		replace float64
	}{{"sphere", 0.07}, {"clustered", 0.07}, {"sphere", 0}, {"clustered", 0}} {
		gen := tc.gen
		cfg := smallConfig()
		cfg.Obs, cfg.ObsGen, cfg.Steps, cfg.Replace = 2*sphere.ReplaceBlockSize+777, gen, 4, tc.replace
		whole, _ := record(t, cfg, 2)
		cuts := []int{0, 1000, 1000, sphere.ReplaceBlockSize + 5, cfg.Obs}
		var parts [][]recorded
		for p := range len(cuts) - 1 {
			pc := cfg
			pc.Part = Part{Lo: cuts[p], Hi: cuts[p+1]}
			if pc.Part.Lo == pc.Part.Hi {
				continue // an empty part answers nothing: Hi 0 is no part
			}
			steps, _ := record(t, pc, 2)
			parts = append(parts, steps)
		}
		for k, w := range whole {
			var index []uint32
			replaced, changed := 0, 0
			for _, steps := range parts {
				s := steps[k]
				index = append(index, s.index...)
				replaced, changed = replaced+s.step.Replaced, changed+s.step.Changed
				if !slices.Equal(s.ref, w.ref) {
					t.Fatalf("%s, step %d: a part's references differ", gen, k+1)
				}
			}
			if k > 0 && ((tc.replace > 0 && w.step.Replaced == 0) || w.step.Changed == 0) {
				t.Fatalf("%s, step %d: nothing replaced or changed: no test", gen, k+1)
			}
			if !slices.Equal(index, w.index) || replaced != w.step.Replaced || changed != w.step.Changed {
				t.Errorf("%s, step %d: parts answer differently (replaced %d, changed %d; whole %d, %d)",
					gen, k+1, replaced, changed, w.step.Replaced, w.step.Changed)
			}
		}
	}
}
