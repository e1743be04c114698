package index

import (
	"math"

	"github.com/geoknn/geoknn/internal/kernels"
)

// The face cells' geometry, shared by both engines: how many cells a face
// edge for a query, and how long a cell's list may grow before it splits.

// The cube's cells balance the build against the query: a cell costs
// its build a scan of the references near it, an observation its query a
// rank of its cell's candidates, so the sum is least near
// cellsScale*sqrt(nobs*nref) cells (fitted on the GPU machine: 2 cells a
// reference best for 2^27 x 2^16, 0.5 for 2^27 x 2^20), within
// [minCellsPerRef, maxCellsPerRef] cells a reference.
const (
	cellsScale     = 0.044
	minCellsPerRef = 0.25
	maxCellsPerRef = 2 // finer cells no longer shorten the lists
)

// skewedCellsShare is the first level's share of those cells where the
// references are skewed (a k-d tree plan): its cells far from references
// cost the most, scanning the farthest, and the crowded ones split.
const skewedCellsShare = 0.25

// MaxCellsSide bounds the cube's cells a face edge: 6 x 512^2 cells hold
// 800 MB of lists.
const MaxCellsSide = 512

// CellsSideFor is the cells a face edge of the first level for nobs
// observations and nref references, skewed or not.
func CellsSideFor(nobs, nref int, skewed bool) int {
	cells := cellsScale * math.Sqrt(float64(nobs)*float64(nref))
	if skewed {
		cells *= skewedCellsShare
	}
	cells = min(max(cells, minCellsPerRef*float64(nref)), maxCellsPerRef*float64(nref))
	side := int(math.Round(math.Sqrt(cells / 6)))
	return max(4, min(side, MaxCellsSide))
}

// CellsGridSide is the side of the grid index the lists are built from
// when the plan has none (a k-d tree): the uniform planner's for nref,
// whose cells fit the balls a build scans more closely than a coarse grid
// fitted to skewed references.
func CellsGridSide(nref int) int { return GridSide(nref, 2) }

// FaceCells is the number of cells of a cube of side cells a face edge.
func FaceCells(side int) int { return 6 * side * side }

// CellsSplitAbove is the list length above which a cell splits, where a
// finer one keeps fewer.
const CellsSplitAbove = kernels.CellsCap
