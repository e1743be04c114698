package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeGenerated writes n points with ids, spread over the sphere with
// clusters (ties and lists of many), as CSV.
func writeGenerated(t *testing.T, dir, name string, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("name,lat,lon\n")
	for i := range n {
		lat, lon := rng.Float64()*170-85, rng.Float64()*360-180
		if i%3 == 0 { // a cluster near Zürich, some points repeated
			lat, lon = 47+float64(i%50)/100, 8+float64(i%7)/10
		}
		fmt.Fprintf(&b, "p%d,%.6f,%.6f\n", i, lat, lon)
	}
	return write(t, dir, name, b.String())
}

// run runs knn run with args and returns the output file's bytes.
func runOut(t *testing.T, out string, args ...string) []byte {
	t.Helper()
	args = append([]string{"run", "--engine", "cpu", "-q", "--out", out}, args...)
	status, _, stderr := mainFor(args...)
	if status != 0 {
		t.Fatalf("%v: exit %d: %s", args, status, stderr)
	}
	b := mustRead(t, out)
	os.Remove(out)
	return b
}

// The streamed run (chunks of 500 observations, several a file) writes,
// byte for byte, what the whole-input run (--repeat 2 reads the whole
// input first) writes: every input format, query kind and output format,
// on the real sample and on a generated set, with ids too.
func TestStreamedAsWhole(t *testing.T) {
	dir := t.TempDir()
	cities := copyFile(t, sampleCities, dir, "cities.csv")
	airports := copyFile(t, sampleAirports, dir, "airports.csv")
	gen := writeGenerated(t, dir, "gen.csv", 3000, 7)
	inputs := []string{cities, gen}
	inputs = append(inputs, gzipped(t, cities))
	for _, ext := range []string{".parquet", ".arrow", ".npy", ".npz"} {
		to := filepath.Join(dir, "cities"+ext)
		if status, _, stderr := mainFor("convert", cities, to); status != 0 {
			t.Fatalf("convert %s: %s", ext, stderr)
		}
		inputs = append(inputs, to)
	}
	kinds := [][]string{
		nil, {"--k", "4"}, {"--k", "2", "--max-m", "150000"}, {"--k", "3", "--exclude-self"},
		{"--within-m", "150000"}, {"--within-m", "150000", "--list"}, {"--within-m", "80000", "--list", "--exclude-self"},
	}
	for _, obs := range inputs {
		for _, kind := range kinds {
			ref := airports
			if len(kind) > 0 && kind[len(kind)-1] == "--exclude-self" {
				ref = obs
			}
			for _, ext := range []string{".csv", ".npz", ".parquet", ".arrow"} {
				args := append([]string{"--obs", obs, "--ref", ref, "--validate", "50"}, kind...)
				out := filepath.Join(dir, "out"+ext)
				streamed := runOut(t, out, append(args, "--chunk-rows", "500")...)
				whole := runOut(t, out, append(args, "--repeat", "2")...)
				if !bytes.Equal(streamed, whole) {
					t.Errorf("%s %v -> %s: streamed %d bytes differ from the whole run's %d", filepath.Base(obs), kind, ext, len(streamed), len(whole))
				}
			}
		}
	}
	for _, kind := range kinds[:6] {
		for _, ext := range []string{".csv", ".parquet", ".arrow"} {
			args := append([]string{"--obs", gen, "--obs-id", "name", "--ref", gen, "--ref-id", "name"}, kind...)
			out := filepath.Join(dir, "ids"+ext)
			streamed := runOut(t, out, append(args, "--chunk-rows", "700")...)
			whole := runOut(t, out, append(args, "--repeat", "2")...)
			if !bytes.Equal(streamed, whole) {
				t.Errorf("ids %v -> %s: streamed and whole differ", kind, ext)
			}
		}
	}
}

// gzipped writes path's bytes gzip-compressed to path + ".gz".
func gzipped(t *testing.T, path string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(mustRead(t, path))
	zw.Close()
	return write(t, filepath.Dir(path), filepath.Base(path)+".gz", b.String())
}
