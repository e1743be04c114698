package cpu

import (
	"fmt"
	"sync"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
)

// CPUIndex is the local index the root package's Index answers small
// queries with (through internal/engines).
var _ engine.LocalIndex = (*CPUIndex)(nil)

// CPUIndex is a reference set prepared once for many small queries answered
// on the calling goroutine: the unit vectors with exact duplicates merged
// and their k-d tree (nearest), and with duplicates kept and their k-d tree
// (k nearest) and grid (radius). The trees cost what the grid did for
// uniform references (BenchmarkIndexOnePoint) and stay fast where they
// crowd. It is read-only after NewCPUIndex: safe for concurrent queries.
type CPUIndex struct {
	refs, all     *index.RefSet
	tree, treeAll *index.KDTree
	gridAll       *index.GridIndex
	plans         index.Plans // the large queries' plans (Prepared)
}

// NewCPUIndex prepares ref.
func NewCPUIndex(ref index.Points) (*CPUIndex, error) {
	if err := ref.Check("references"); err != nil {
		return nil, err
	}
	if ref.Len() == 0 || ref.Len() > 1<<31-1 {
		return nil, fmt.Errorf("references: %d (want 1 to %d)", ref.Len(), 1<<31-1)
	}
	x := &CPUIndex{refs: index.PrepareRefs(ref)}
	x.all = x.refs // without duplicates, the same references in the same order
	if x.refs.Dups {
		x.all = index.PrepareRefsAll(ref)
	}
	// The trees and the grid are built side by side (about 20 ms each for
	// the 135,233 cities on 2 cores, a tree's levels shared by every core
	// only near its top), and a stream waits for them before its first
	// chunk.
	var wg sync.WaitGroup
	wg.Go(func() { x.tree = index.BuildKDTree(x.refs) })
	wg.Go(func() { x.gridAll = index.BuildFittedGrid(x.all, max(4, index.GridSide(x.all.N, 2))) })
	if x.refs.Dups {
		x.treeAll = index.BuildKDTree(x.all)
	}
	wg.Wait()
	if !x.refs.Dups {
		x.treeAll = x.tree
	}
	return x, nil
}

// Prepared is the index's references and indexes as the engines take them
// (Request.Prepared), for the queries too large to answer here.
func (x *CPUIndex) Prepared() *engine.Prepared {
	return &engine.Prepared{Merged: x.refs, All: x.all, Tree: x.tree, TreeAll: x.treeAll, GridAll: x.gridAll, Plans: &x.plans}
}

// Nearest answers obs into out on the calling goroutine.
func (x *CPUIndex) Nearest(obs index.Points, out engine.Result) error {
	if err := checkSmall(obs, len(out.Index), len(out.Distance), 1); err != nil {
		return err
	}
	for i := range obs.Len() {
		px, py, pz := index.Unit(obs.At(i))
		d, k := x.tree.Nearest(px, py, pz, nil)
		out.Index[i], out.Distance[i] = x.refs.Orig[k], float32(index.ChordToAngle(d))
	}
	return nil
}

// KNearest answers the out.K nearest within maxRad on the calling
// goroutine.
func (x *CPUIndex) KNearest(obs index.Points, maxRad float64, out engine.KResult) error {
	if err := checkSmall(obs, len(out.Index), len(out.Distance), out.K); err != nil {
		return err
	}
	if err := engine.CheckKRefs(out.K, x.all.N); err != nil {
		return err
	}
	t, maxD2 := &index.TopK{}, index.ChordLimit(maxRad)
	for i := range obs.Len() {
		px, py, pz := index.Unit(obs.At(i))
		fillRow(out, i, x.treeAll.KNearest([3]float64{px, py, pz}, out.K, maxD2, t))
	}
	return nil
}

// Within answers the references within rad on the calling goroutine.
func (x *CPUIndex) Within(obs index.Points, rad float64, list bool) (engine.WithinResult, error) {
	if err := checkSmall(obs, 0, 0, 0); err != nil {
		return engine.WithinResult{}, err
	}
	res := engine.WithinResult{Counts: make([]uint32, obs.Len())}
	var found, scratch []index.Neighbour
	maxD2 := index.ChordLimit(rad)
	for i := range obs.Len() {
		px, py, pz := index.Unit(obs.At(i))
		p := [3]float64{px, py, pz}
		if !list {
			res.Counts[i] = x.gridAll.Count(p, maxD2)
			continue
		}
		scratch = x.gridAll.Within(p, maxD2, scratch[:0])
		res.Counts[i] = uint32(len(scratch))
		found = append(found, scratch...)
	}
	if list {
		res.Gather([][]index.Neighbour{found})
	}
	return res, nil
}

// checkSmall checks a small query's observations and its result's room
// (k answers each; k 0: no result to check).
func checkSmall(obs index.Points, nIndex, nDist, k int) error {
	if err := obs.Check("observations"); err != nil {
		return err
	}
	if k > 0 && (nIndex != k*obs.Len() || nDist != k*obs.Len()) {
		return fmt.Errorf("result has room for %d indices and %d distances, want %d", nIndex, nDist, k*obs.Len())
	}
	return nil
}
