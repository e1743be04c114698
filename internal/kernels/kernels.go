package kernels

import (
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed sass
var sass embed.FS

//go:embed haversine.ptx
var haversinePTX string

//go:embed seed.ptx
var seedPTX string

//go:embed grid.ptx
var gridPTX string

//go:embed resident.ptx
var residentPTX string

//go:embed generate.ptx
var generatePTX string

//go:embed knn.ptx
var knnPTX string

//go:embed move.ptx
var movePTX string

//go:embed tree.ptx
var treePTX string

//go:embed cells.ptx
var cellsPTX string

//go:embed valid.ptx
var validPTX string

// PTX returns the PTX of the named kernel file: "haversine" (the exact
// brute force: block_min, global_min, refine), "seed" (the float32
// baseline brute-force kernels, inexact by design), "grid" (the exact
// query through the cell index, and its sorts), "resident" (replacing
// observations kept on the GPU, mapping merged duplicates, counting changed
// answers), "generate" (synthetic observations made on the GPU) or "knn"
// (k nearest and within a radius, through the grid index), "move"
// (references moved on the GPU, sphere.Propagate's twin), "tree" (the
// exact query through a k-d tree), "cells" (the exact query through
// candidate lists of cube-face cells, which needs no observation sort) or
// "valid" (the check of observations copied in from the caller's
// page-locked columns).
// When the environment variable GEOKNN_PTX_DIR is set, the file NAME.ptx is read from
// that folder instead of the embedded copy: kernel developers use it to run
// freshly built PTX without rebuilding the binary.
func PTX(name string) (string, error) {
	embedded, ok := map[string]string{"haversine": haversinePTX, "seed": seedPTX, "grid": gridPTX,
		"resident": residentPTX, "generate": generatePTX, "knn": knnPTX, "move": movePTX, "tree": treePTX,
		"cells": cellsPTX, "valid": validPTX}[name]
	if !ok {
		return "", fmt.Errorf("no kernel file %q", name)
	}
	if dir := os.Getenv("GEOKNN_PTX_DIR"); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, name+".ptx"))
		if err != nil {
			return "", fmt.Errorf("GEOKNN_PTX_DIR: %w", err)
		}
		return string(b), nil
	}
	return embedded, nil
}

// Fatbin returns the machine code of the named kernel file (a fat binary of
// SASS for sm_80, sm_86, sm_89 and sm_90), or nil when the caller should
// load PTX: the binary carries none, or GEOKNN_PTX_DIR asks for PTX. When
// GEOKNN_SASS_DIR is set, NAME.fatbin.gz is read from that folder instead
// of the embedded copy.
func Fatbin(name string) ([]byte, error) {
	dir := os.Getenv("GEOKNN_SASS_DIR")
	if dir == "" && os.Getenv("GEOKNN_PTX_DIR") != "" {
		return nil, nil
	}
	var files fs.FS = sass
	path := "sass/" + name + ".fatbin.gz"
	if dir != "" {
		files, path = os.DirFS(dir), name+".fatbin.gz"
	}
	gz, err := files.Open(path)
	if errors.Is(err, fs.ErrNotExist) && dir == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kernels: %w", err)
	}
	defer gz.Close()
	return gunzip(gz, name)
}

func gunzip(gz io.Reader, name string) ([]byte, error) {
	r, err := gzip.NewReader(gz)
	if err != nil {
		return nil, fmt.Errorf("kernels: %s.fatbin.gz: %w", name, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("kernels: %s.fatbin.gz: %w", name, err)
	}
	return b, nil
}

// Files are the kernel files PTX knows, in load order.
var Files = []string{"haversine", "seed", "grid", "resident", "generate", "knn", "move", "tree", "cells", "valid"}

// Block-min launch shape, mirrored from haversine.cu's #defines; the test
// checks that the two agree.
const (
	BlockMinThreads = 256        // BM_THREADS
	BlockMinObs     = 8          // BM_OBS: observations per thread
	BlockMinTile    = 1024       // BM_TILE: slice lengths are multiples of this
	RefineThreads   = 256        // RF_THREADS
	SeedWidth       = 32         // SEED_WIDTH: partials per observation in the seed port
	GridPrepThreads = 256        // PREP_THREADS: the observation sort's kernels
	GridScanThreads = 1024       // SCAN_THREADS
	GridScanChunk   = 8192       // SCAN_CHUNK: entries a grid_scan_blocks block scans
	GenThreads      = 256        // GEN_THREADS: gen_sphere, gen_seed
	ObsRecBytes     = 32         // OBS_REC_BYTES: sizeof(ObsRec), asserted in sphere.cuh
	KnnThreads      = 128        // KNN_THREADS: grid_knn, grid_within
	KnnMax          = 64         // KNN_MAX: the largest k grid_knn answers
	MoveThreads     = 256        // MOVE_THREADS: move_refs
	ValidThreads    = 256        // VALID_THREADS: valid_f64, valid_f32
	ReplaceBlock    = 4096       // REPLACE_BLOCK: observations a draw_replace block draws for
	DrawThreads     = 64         // DRAW_THREADS: draw_replace_f64, draw_replace_f32
	CountThreads    = 256        // CC_THREADS: count_changed
	TreeStack       = 32         // TREE_STACK: the deepest k-d tree tree_query walks
	TreeLeaf        = 0x80000000 // TREE_LEAF: a tree node's child that is a leaf
	TreeNodeBytes   = 64         // sizeof(TreeNode), asserted in tree.cu
	CellsCap        = 32         // CL_CAP: entries a face cell's candidate list holds
	CellsBuildWarps = 4          // CB_WARPS: cells (one a warp) a cells_build block
	CellsThreads    = 256        // CQ_THREADS: cells_query_f64, cells_query_f32
	CellsStatusLen  = 4          // CS_WORDS: cells_build's status words
	CellsFailed     = 0          // CS_FAILED: status word, cells whose list could not be made
	CellsEntries    = 1          // CS_ENTRIES: status word, entries in all lists
	CellsLongest    = 2          // CS_LONGEST: status word, the longest list
	CellsSplit      = 3          // CS_SPLIT: status word, cells split into the next level
	CellsSplitN     = 4          // CL_SPLIT_N: a split cell's children an edge
	CellsPass       = 512        // CL_PASS: survivors a split cell passes down to its children
	CellsPassSlots  = 16384      // CL_PASS_SLOTS: split cells a level that can pass them down
)

// NoAnswer marks an observation with no previous answer in a session (new
// since the last query); resident.cu's NO_ANSWER.
const NoAnswer = ^uint32(0)
