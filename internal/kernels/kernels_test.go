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

// sourceHashes is the SHA-256 of each .cu followed by every .cuh (in name
// order), as build.sh computes it, by kernel file name.
func sourceHashes(t *testing.T) map[string]string {
	sources, err := filepath.Glob("*.cu")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no .cu files found: %v", err)
	}
	headers, err := filepath.Glob("*.cuh") // sorted by name
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, cu := range sources {
		h := sha256.New()
		for _, f := range append([]string{cu}, headers...) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(src)
		}
		out[strings.TrimSuffix(cu, ".cu")] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

func TestPTXMatchesSource(t *testing.T) {
	for name, want := range sourceHashes(t) {
		f, err := os.Open(name + ".ptx")
		if err != nil {
			t.Errorf("%s.cu has no PTX: %v (run `make ptx` on a machine with nvcc)", name, err)
			continue
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		got := strings.TrimSpace(strings.TrimPrefix(line, hashPrefix))
		if !strings.HasPrefix(line, hashPrefix) || got != want {
			t.Errorf("%s.ptx was built from another version of %s.cu (PTX says %q, source is %s): run `make ptx` on a machine with nvcc and commit the PTX", name, name, got, want)
		}
	}
}

// Every .cu has machine code built from its current sources, listed in
// sass/SUMS, and Fatbin serves it.
func TestFatbinsMatchSource(t *testing.T) {
	sums, err := os.ReadFile("sass/SUMS")
	if err != nil {
		t.Fatalf("no sass/SUMS: %v (run `make ptx` on a machine with nvcc)", err)
	}
	built := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			built[strings.TrimSuffix(f[1], ".fatbin.gz")] = f[0]
		}
	}
	for name, want := range sourceHashes(t) {
		if built[name] != want {
			t.Errorf("sass/%s.fatbin.gz was built from another version of %s.cu (SUMS says %q, source is %s): run `make ptx` and commit sass/", name, name, built[name], want)
			continue
		}
		img, err := Fatbin(name)
		if err != nil || len(img) == 0 {
			t.Errorf("Fatbin(%s) = %d bytes, %v", name, len(img), err)
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
		{"sphere.cuh", "OBS_REC_BYTES", ObsRecBytes},
		{"generate.cu", "GEN_THREADS", GenThreads},
		{"resident.cu", "NO_ANSWER", int(NoAnswer)},
		{"knn.cu", "NO_ANSWER", int(NoAnswer)},
		{"knn.cu", "KNN_THREADS", KnnThreads},
		{"knn.cu", "KNN_MAX", KnnMax},
		{"move.cu", "MOVE_THREADS", MoveThreads},
		{"valid.cu", "VALID_THREADS", ValidThreads},
		{"resident.cu", "REPLACE_BLOCK", ReplaceBlock},
		{"resident.cu", "DRAW_THREADS", DrawThreads},
		{"resident.cu", "CC_THREADS", CountThreads},
		{"tree.cu", "TREE_STACK", TreeStack},
		{"tree.cu", "TREE_LEAF", TreeLeaf},
		{"tree.cu", "TREE_NODE_BYTES", TreeNodeBytes},
		{"cells.cu", "CL_CAP", CellsCap},
		{"cells.cu", "CB_WARPS", CellsBuildWarps},
		{"cells.cu", "CQ_THREADS", CellsThreads},
		{"cells.cu", "CS_WORDS", CellsStatusLen},
		{"cells.cu", "CS_FAILED", CellsFailed},
		{"cells.cu", "CS_ENTRIES", CellsEntries},
		{"cells.cu", "CS_LONGEST", CellsLongest},
		{"cells.cu", "CS_SPLIT", CellsSplit},
		{"resident.cu", "CELLS_FAILED", CellsFailed},
		{"resident.cu", "CELLS_SPLIT", CellsSplit},
		{"cells.cu", "CL_SPLIT_N", CellsSplitN},
		{"cells.cu", "CL_PASS", CellsPass},
		{"cells.cu", "CL_PASS_SLOTS", CellsPassSlots},
	} {
		src, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^#define ` + tc.define + `\s+(0x[0-9a-fA-F]+|\d+)u?\b`).FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: no #define %s", tc.file, tc.define)
			continue
		}
		if got, _ := strconv.ParseInt(string(m[1]), 0, 64); int(got) != tc.want {
			t.Errorf("%s: %s = %d, Go constant = %d", tc.file, tc.define, got, tc.want)
		}
	}
}
