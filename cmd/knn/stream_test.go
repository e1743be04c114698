package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geoknn/geoknn/stream"
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

// A bad row in a late chunk: the error names the file and line, exit 1,
// and no output (nor its temporary file) is left, whatever the format.
func TestStreamBadLateChunk(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("lat,lon\n")
	for i := range 20000 {
		lat := float64(i%170) - 85
		if i == 15000 {
			lat = 95
		}
		fmt.Fprintf(&b, "%g,%g\n", lat, float64(i%360)-179.5)
	}
	obs := write(t, dir, "obs.csv", b.String())
	for _, ext := range []string{".csv", ".npz", ".parquet", ".arrow"} {
		out := filepath.Join(dir, "out"+ext)
		status, _, stderr := mainFor("run", "--engine", "cpu", "-q", "--obs", obs, "--ref", "2^8", "--chunk-rows", "1000", "--k", "2", "--out", out)
		if status != 1 || !strings.Contains(stderr, "obs.csv") || !strings.Contains(stderr, "obs.csv:15002: latitude") || strings.Contains(stderr, "write") {
			t.Errorf("%s: exit %d, %q", ext, status, stderr)
		}
		if names, _ := os.ReadDir(dir); len(names) != 1 {
			t.Errorf("%s: left behind %v", ext, names)
		}
	}
}

// SIGINT and SIGTERM stop a streamed run as the whole-input run: 130 or
// 143 within a second and a half, whether chunks are being read, queried
// or written, leaving nothing behind.
func TestStreamSignals(t *testing.T) {
	bin := knnBinary(t)
	dir := t.TempDir()
	obs := writeGenerated(t, dir, "obs.csv", 1<<19, 3)
	for _, tc := range []struct {
		name    string
		sig     syscall.Signal
		out     string
		trigger func(dir string) bool
	}{
		{"SIGTERM reading", syscall.SIGTERM, "o.csv", nil},
		{"SIGINT in the stream", syscall.SIGINT, "o.parquet", nil},
		{"SIGTERM writing", syscall.SIGTERM, "o.csv", tempWritten("o.csv")},
		// The arrays of an input of unknown length wait in spill files
		// until the end: the signal comes once the output's file exists.
		{"SIGINT writing npz", syscall.SIGINT, "o.npz", tempCreated("o.npz")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := t.TempDir()
			cmd, stderr := knnChild(t, bin, sub, nil, "run", "--engine", "cpu", "-q", "--algo", "brute", "--obs", obs,
				"--ref", "2^12", "--chunk-rows", "65536", "--out", tc.out)
			waitFor(tc.trigger, sub)
			sent := time.Now()
			stopAndWait(t, cmd, stderr, tc.sig)
			if took := time.Since(sent); took > 1500*time.Millisecond || !strings.Contains(stderr.String(), "stopped by") {
				t.Errorf("stopped after %v; stderr %q", took, stderr.String())
			}
			if names, _ := os.ReadDir(sub); len(names) != 0 {
				t.Errorf("left behind: %v; exit %v; stderr %q", names, cmd.ProcessState, stderr.String())
			}
		})
	}
}

// tempCreated holds once the output's temporary file exists.
func tempCreated(out string) func(dir string) bool {
	return func(dir string) bool {
		names, _ := filepath.Glob(filepath.Join(dir, "."+out+".tmp-*"))
		return len(names) > 0
	}
}

// tempWritten holds once the output's temporary file holds answers.
func tempWritten(out string) func(dir string) bool {
	return func(dir string) bool {
		names, _ := filepath.Glob(filepath.Join(dir, "."+out+".tmp-*"))
		for _, n := range names {
			if fi, err := os.Stat(n); err == nil && fi.Size() > 0 {
				return true
			}
		}
		return false
	}
}

// writeNPY writes n points to an (n, 2) .npy file, a block at a time
// (this process stays small: see TestStreamMemoryBound).
func writeNPY(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("in%d.npy", n))
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 2), }", n)
	header += strings.Repeat(" ", 127-10-len(header)) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), 0)
	b = append(b, header...)
	block := make([]byte, 0, 16<<12)
	for i := range 1 << 12 {
		block = binary.LittleEndian.AppendUint64(block, math.Float64bits(float64(i%1799)/10-89.9))
		block = binary.LittleEndian.AppendUint64(block, math.Float64bits(float64(i%3599)/10-179.9))
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(b)
	for range n >> 12 {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// collected is an answer writer that keeps the nearest answers by
// observation, wherever the chunks start.
type collected map[int]uint32

func (c collected) Write(a stream.Answers) error {
	for i := range a.N {
		c[a.Base+i], _ = a.Nearest(i)
	}
	return nil
}
func (c collected) Close() error { return nil }
func (c collected) Abort()       {}

// An MPI rank's share, rows [lo, hi) of the input, streams the answers of
// those rows, obs_index counted in the whole input, validated.
func TestStreamRange(t *testing.T) {
	ctx := context.Background()
	var f runFlags
	f.flagSet(io.Discard).Parse([]string{"--obs", sampleCities, "--ref", sampleAirports, "--engine", "cpu", "--validate", "40", "--chunk-rows", "300"})
	opts, _ := f.options()
	var log bytes.Buffer
	j, _, err := openStreamJob(ctx, f, opts, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer j.x.Close()
	got := collected{}
	st, err := j.streamRange(ctx, 700, 1500, got)
	if err != nil || st.Rows != 800 || len(got) != 800 || !strings.Contains(log.String(), ": 0 wrong") {
		t.Fatalf("%v: %d rows, %d answers; %s", err, st.Rows, len(got), log.String())
	}
	status, out, _ := mainFor("run", "--obs", sampleCities, "--ref", sampleAirports, "--engine", "cpu", "-q", "--out", "-")
	for _, line := range strings.Split(out, "\n")[1:] {
		var i, ref int
		var m float64
		if _, err := fmt.Sscanf(line, "%d,%d,%f", &i, &ref, &m); err != nil || i < 700 || i >= 1500 {
			continue
		}
		if got[i] != uint32(ref) {
			t.Errorf("row %d: %d, want %d", i, got[i], ref)
		}
	}
	if status != 0 {
		t.Error(status)
	}
}

// A streamed neighbour query's report states the query in the user's terms
// (the k asked, metres) and the index apart: no engine-side k + 1 for
// --exclude-self, no radius in radians.
func TestStreamReportUserTerms(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args    []string
		want    string
		notWant []string
	}{
		{[]string{"--k", "2", "--exclude-self"}, "2 nearest of", []string{"3 nearest"}},
		{[]string{"--within-m", "50000", "--list"}, "within 50000 m of", []string{" rad"}},
	} {
		args := append([]string{"run", "--engine", "cpu", "--obs", sampleAirports, "--ref", sampleAirports,
			"--out", filepath.Join(dir, "o.csv")}, tc.args...)
		status, _, stderr := mainFor(args...)
		if status != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, want %q in %q", tc.args, status, tc.want, stderr)
		}
		for _, bad := range tc.notWant {
			if strings.Contains(stderr, bad) {
				t.Errorf("%v: %q in %q", tc.args, bad, stderr)
			}
		}
	}
}

// pauseCollection turns the collector off, the GPU heap floor its limit,
// and its resume restores both, once.
func TestPauseCollection(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: kept as the user set them")
	}
	percent0 := debug.SetGCPercent(-1)
	debug.SetGCPercent(percent0)
	limit0 := debug.SetMemoryLimit(-1)
	floor := gpuHeapFloor() // it moves with the memory available: read beside the pause
	resume := pauseCollection()
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(-1)
	resume()
	resume()
	if percent != -1 || limit < floor/2 || limit > 2*floor {
		t.Errorf("paused: GOGC %d, limit %d (want -1, about %d)", percent, limit, floor)
	}
	if p := debug.SetGCPercent(percent0); p != percent0 {
		t.Errorf("resumed: GOGC %d, want %d", p, percent0)
	}
	if l := debug.SetMemoryLimit(-1); l != limit0 {
		t.Errorf("resumed: limit %d, want %d", l, limit0)
	}
}
