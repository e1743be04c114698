package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/realdata"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/validate"
)

func runKnn(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every bad input is refused with the file, line and value, a non-nil error
// (exit 1) and no output file.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good.csv", "lat,lon\n1,2\n3,4\n")
	for _, tc := range []struct {
		name, body string
		want       []string // substrings of the error
	}{
		{"nan.csv", "lat,lon\n1,2\nNaN,4\n", []string{"nan.csv:3", "NaN"}},
		{"inf.csv", "lat,lon\n1,+Inf\n", []string{"inf.csv:2", "Inf"}},
		{"lat.csv", "lat,lon\n1,2\n90.5,4\n", []string{"lat.csv:3", "90.5"}},
		{"lon.csv", "latitude,longitude\n1,-180.01\n", []string{"lon.csv:2", "-180.01"}},
		{"text.csv", "lat,lon\n1,2\nabc,4\n", []string{"text.csv:3", "abc"}},
		{"short.csv", "name,lat,lon\nx,1\n", []string{"short.csv:2"}},
		{"empty.csv", "lat,lon\n", []string{"empty.csv", "no data rows"}},
		{"nocols.csv", "x,y\n1,2\n", []string{"nocols.csv", "lat"}},
		{"bad.geojson", `{"type":"Point","coordinates":[200,1]}`, []string{"bad.geojson", "200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := write(t, dir, tc.name, tc.body)
			out := filepath.Join(dir, "out-"+tc.name+".csv")
			for _, args := range [][]string{
				{"run", "--obs", bad, "--ref", good, "--out", out, "--engine", "cpu"},
				{"run", "--obs", good, "--ref", bad, "--out", out, "--engine", "cpu"},
			} {
				_, _, err := runKnn(t, args...)
				if err == nil {
					t.Fatalf("%v: no error", args)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
					t.Errorf("output file left behind after %v", err)
				}
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--obs", "10"},
		{"run", "--obs", "10", "--ref", "0"},
		{"run", "--obs", "10", "--ref", "no-such-file.csv"},
		{"run", "--obs", "10", "--ref", "10", "--bogus"},
		{"run", "--obs", "10", "--ref", "10", "--engine", "tpu"},
		{"run", "--obs", "10", "--ref", "10", "--algo", "magic"},
		{"run", "--obs", "10", "--ref", "10", "--gen", "lumpy"},
		{"run", "--obs", "2^x", "--ref", "10"},
		{"frobnicate"},
	} {
		if _, _, err := runKnn(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// --within-m 0 is refused, not answered as the nearest table.
func TestRunWithinZeroRefused(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--engine", "cpu", "--obs", "10", "--ref", "10", "--within-m", "0", "--out", "-"},
		{"run", "--engine", "cpu", "--obs", "10", "--ref", "10", "--within-m", "-0", "--k", "3", "--out", "-"},
	} {
		status, stdout, stderr := mainFor(args...)
		if status != 2 || stdout != "" || !strings.Contains(stderr, "--within-m 0") {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
		}
	}
}

// knn run on the shared cities and airports answers every city exactly.
func TestRunCitiesAirports(t *testing.T) {
	dir, _, err := realdata.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cities, airports := filepath.Join(dir, "cities.csv"), filepath.Join(dir, "airports.csv")
	out := filepath.Join(t.TempDir(), "nearest.csv")
	_, stderr, err := runKnn(t, "run", "--obs", cities, "--ref", airports, "--engine", "cpu", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	obs, _ := formats.ReadFile(cities)
	ref, _ := formats.ReadFile(airports)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "obs_index,ref_index,distance_m" || len(rows) != len(obs)+1 {
		t.Fatalf("header %v, %d rows for %d cities", rows[0], len(rows)-1, len(obs))
	}
	index := make([]uint32, len(obs))
	dist := make([]float32, len(obs))
	for i, r := range rows[1:] {
		o, _ := strconv.Atoi(r[0])
		k, _ := strconv.Atoi(r[1])
		m, _ := strconv.ParseFloat(r[2], 64)
		if o != i {
			t.Fatalf("row %d has obs_index %d", i, o)
		}
		index[i], dist[i] = uint32(k), float32(m/sphere.EarthRadiusMetres)
	}
	rep, err := validate.Exact(context.Background(), obs, ref, index, dist)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("%s %v", rep, rep.Failures)
	}
	t.Log(rep)
}

func TestDevicesWithoutGPU(t *testing.T) {
	stdout, _, err := runKnn(t, "devices")
	if err != nil {
		t.Fatal(err)
	}
	if stdout == "" {
		t.Error("devices printed nothing")
	}
}

// The "wrote" line of an answer streamed to stdout names standard output,
// not "-".
func TestWroteStandardOutput(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--engine", "cpu", "--obs", "16", "--ref", "8", "--out", "-"},
		{"run", "--engine", "cpu", "--obs", "16", "--ref", "8", "--k", "2", "--out", "-"},
		{"run", "--engine", "cpu", "--obs", sampleAirports, "--ref", sampleAirports, "--out", "-"},
		{"convert", sampleAirports, "-"},
	} {
		status, _, stderr := mainFor(args...)
		if status != 0 || !strings.Contains(stderr, "wrote standard output (") && !strings.Contains(stderr, "answers:      standard output (") {
			t.Errorf("%v: status %d, stderr %q", args, status, stderr)
		}
	}
}
