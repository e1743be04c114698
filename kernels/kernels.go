// Package kernels holds geoknn's CUDA kernels: each .cu beside this file, and
// the PTX that nvcc built from it (kernels/build.sh, `make ptx`), embedded so
// that the Go binary needs no CUDA toolkit. The driver JIT-compiles the PTX
// for whatever GPU it finds (compute capability 8.0 and newer).
//
// Every PTX file starts with the SHA-256 of the source it was built from;
// TestPTXMatchesSource fails when a .cu changed and its PTX was not rebuilt.
package kernels

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

// Haversine is the PTX of haversine.cu: the exact brute-force kernels
// (to_unit, block_min, global_min, refine) for fp64 and fp32 inputs.
//
//go:embed haversine.ptx
var Haversine string

// Seed is the PTX of seed.cu: the reference notebook's kernels, ported as the
// benchmark baseline.
//
//go:embed seed.ptx
var Seed string

// Grid is the PTX of grid.cu: the exact query through the cell index.
//
//go:embed grid.ptx
var Grid string

// Resident is the PTX of resident.cu: replacing observations kept on the
// GPU and counting changed answers between queries (engine sessions).
//
//go:embed resident.ptx
var Resident string

// PTX returns the PTX of the named kernel file ("haversine", "seed",
// "grid"). When the environment variable GEOKNN_PTX_DIR is set, the file
// NAME.ptx is read from that folder instead of the embedded copy: kernel
// developers use it to run freshly built PTX without rebuilding the binary.
func PTX(name string) (string, error) {
	if dir := os.Getenv("GEOKNN_PTX_DIR"); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, name+".ptx"))
		if err != nil {
			return "", fmt.Errorf("GEOKNN_PTX_DIR: %w", err)
		}
		return string(b), nil
	}
	switch name {
	case "haversine":
		return Haversine, nil
	case "seed":
		return Seed, nil
	case "grid":
		return Grid, nil
	case "resident":
		return Resident, nil
	}
	return "", fmt.Errorf("no kernel file %q", name)
}

// Block-min launch shape, mirrored from haversine.cu's #defines; the test
// checks that the two agree.
const (
	BlockMinThreads = 256  // BM_THREADS
	BlockMinObs     = 8    // BM_OBS: observations per thread
	BlockMinTile    = 1024 // BM_TILE: slice lengths are multiples of this
	RefineThreads   = 256  // RF_THREADS
	SeedWidth       = 32   // SEED_WIDTH: partials per observation in the seed port
	GridPrepThreads = 256  // PREP_THREADS: grid_obs_prep, grid_obs_keys, grid_obs_scatter
	GridScanThreads = 1024 // SCAN_THREADS
	GridScanChunk   = 8192 // SCAN_CHUNK: entries a grid_scan_blocks block scans
	ObsRecBytes     = 32   // sizeof(ObsRec)
)
