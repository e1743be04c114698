package index

import "sync"

// Plans remembers, for prepared references, the plan each cost model last
// chose, so that the chunks of a stream and an index's repeated queries
// are not planned again: planning builds a grid at every candidate side
// (and samples a k-d tree), tens of milliseconds for the 135,233 cities,
// where a chunk of 2^23 observations takes a few milliseconds of kernels.
//
// A remembered plan is checked against each new query: the query's own
// sample (the one PlanGrid would draw) walks the remembered index, a few
// hundred walks, and the plan is kept while it costs at most keepCost
// times what it cost when it was chosen and less than brute force. Else
// (the observations moved away from where the plan was sampled, say a
// fleet's file sorted by region) the query is planned afresh and that plan
// remembered. Any plan answers exactly; the check only keeps one that has
// become slow from being used.
//
// A remembered grid is held with the prepared references until they go:
// 28 bytes a reference and 4 a cell, beside the preparation's own (over
// 60 bytes a reference: unit vectors in three forms, the k-d trees).
//
// A plan is remembered by the reference set's address: the set must not
// change while the Plans lives (prepared references, as an Index's, never
// do; a session's, prepared again every step in place, must not use one).
//
// The zero Plans is ready; a nil *Plans plans every query. It is safe for
// concurrent use; the indexes it hands out are read-only.
type Plans struct {
	mu     sync.Mutex
	last   map[plansKey]GridPlan
	packed map[*KDTree]*PackedTree
}

// plansKey is what a plan was chosen for.
type plansKey struct {
	refs *RefSet
	m    GridCost
	side int
}

// keepCost is how much costlier than when it was chosen a remembered plan
// may sample before the query is planned again.
const keepCost = 2.0

// Plan is PlanGrid(obs, refs, m, side, tree) through the remembered plan
// for refs, m and side when it still suits obs.
func (p *Plans) Plan(obs Points, refs *RefSet, m GridCost, side int, tree *KDTree) GridPlan {
	if p == nil {
		return PlanGrid(obs, refs, m, side, tree)
	}
	key := plansKey{refs, m, side}
	p.mu.Lock()
	last, ok := p.last[key]
	p.mu.Unlock()
	if ok {
		if plan, keep := last.resampled(obs, refs, m); keep {
			return plan
		}
	}
	plan := PlanGrid(obs, refs, m, side, tree)
	p.mu.Lock()
	defer p.mu.Unlock()
	if plan.Index == nil && plan.Tree == nil {
		// Brute force: nothing to walk a sample through; the next query
		// plans afresh rather than resampling a plan already given up.
		delete(p.last, key)
		return plan
	}
	if p.last == nil {
		p.last = map[plansKey]GridPlan{}
	}
	p.last[key] = plan
	return plan
}

// Len is the number of plans remembered.
func (p *Plans) Len() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.last)
}

// resampled is plan with obs's sample walked through its index, and
// whether it is still worth keeping for obs.
func (plan GridPlan) resampled(obs Points, refs *RefSet, m GridCost) (GridPlan, bool) {
	nearest := plan.Tree.nearestFunc()
	if plan.Index != nil {
		nearest = plan.Index.Nearest
	}
	brute := float64(refs.N) + m.bruteQuery
	cells, cands, cost := sampleCost(obs, planSample(obs.Len(), refs.N), m, brute, nearest)
	if cost > keepCost*plan.costPerQuery || cost > brute {
		return plan, false
	}
	plan.cellsPerQuery, plan.candidatesPerQuery = cells, cands
	return plan, true
}

// nearestFunc is t's nearest-reference walk, or nil without a tree.
func (t *KDTree) nearestFunc() func(x, y, z float64, w *GridWork) (float64, uint32) {
	if t == nil {
		return nil
	}
	return t.Nearest
}

// Packed is t packed for the GPU (NewPackedTree), packed once per tree.
func (p *Plans) Packed(t *KDTree) (*PackedTree, error) {
	if p == nil {
		return NewPackedTree(t)
	}
	p.mu.Lock()
	packed, ok := p.packed[t]
	p.mu.Unlock()
	if ok {
		return packed, nil
	}
	packed, err := NewPackedTree(t)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.packed == nil || len(p.packed) >= maxPacked {
		p.packed = map[*KDTree]*PackedTree{} // trees planned afresh (none prepared) come and go
	}
	p.packed[t] = packed
	p.mu.Unlock()
	return packed, nil
}

// maxPacked bounds the packed trees kept: one for the prepared tree, a few
// for trees a plan built.
const maxPacked = 4
