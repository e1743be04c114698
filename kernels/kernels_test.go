package kernels

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const hashPrefix = "// geoknn-source-sha256: "

func TestPTXMatchesSource(t *testing.T) {
	sources, err := filepath.Glob("*.cu")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no .cu files found: %v", err)
	}
	headers, err := filepath.Glob("*.cuh") // sorted by name
	if err != nil {
		t.Fatal(err)
	}
	for _, cu := range sources {
		h := sha256.New()
		for _, f := range append([]string{cu}, headers...) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(src)
		}
		sum := h.Sum(nil)
		want := hex.EncodeToString(sum[:])
		ptx := strings.TrimSuffix(cu, ".cu") + ".ptx"
		f, err := os.Open(ptx)
		if err != nil {
			t.Errorf("%s has no PTX: %v (run `make ptx` on a machine with nvcc)", cu, err)
			continue
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		got := strings.TrimSpace(strings.TrimPrefix(line, hashPrefix))
		if !strings.HasPrefix(line, hashPrefix) || got != want {
			t.Errorf("%s was built from another version of %s (PTX says %q, source is %s): run `make ptx` on a machine with nvcc and commit the PTX", ptx, cu, got, want)
		}
	}
}

func TestEmbeddedPTXHasEntries(t *testing.T) {
	for _, tc := range []struct {
		name, ptx string
		entries   []string
	}{
		{"haversine", Haversine, []string{"to_unit_f64", "block_min_f64", "global_min_f64", "refine_f64", "to_unit_f32", "block_min_f32", "global_min_f32", "refine_f32"}},
		{"seed", Seed, []string{"seed_block_min_f64", "seed_block_min_f32", "seed_global_min"}},
		{"grid", Grid, []string{"grid_obs_prep_f64", "grid_obs_prep_f32", "grid_obs_keys", "grid_ref_keys",
			"grid_scan_blocks", "grid_scan_sums", "grid_scan_add", "grid_obs_scatter", "grid_ref_scatter",
			"grid_runs_trim", "grid_query"}},
		{"resident", Resident, []string{"replace_f64", "replace_f32", "count_changed", "map_index"}},
	} {
		for _, e := range tc.entries {
			if !strings.Contains(tc.ptx, ".entry "+e+"(") {
				t.Errorf("%s.ptx has no entry %s", tc.name, e)
			}
		}
	}
}

// The Go launch code relies on these constants; they must match the .cu.
func TestLaunchConstantsMatchSource(t *testing.T) {
	for _, tc := range []struct {
		file, define string
		want         int
	}{
		{"haversine.cu", "BM_THREADS", BlockMinThreads},
		{"haversine.cu", "BM_OBS", BlockMinObs},
		{"haversine.cu", "BM_TILE", BlockMinTile},
		{"haversine.cu", "RF_THREADS", RefineThreads},
		{"seed.cu", "SEED_WIDTH", SeedWidth},
		{"grid.cu", "PREP_THREADS", GridPrepThreads},
		{"grid.cu", "SCAN_THREADS", GridScanThreads},
		{"grid.cu", "SCAN_ITEMS", GridScanChunk / GridScanThreads},
	} {
		src, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^#define ` + tc.define + `\s+(\d+)`).FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: no #define %s", tc.file, tc.define)
			continue
		}
		if got, _ := strconv.Atoi(string(m[1])); got != tc.want {
			t.Errorf("%s: %s = %d, Go constant = %d", tc.file, tc.define, got, tc.want)
		}
	}
}
