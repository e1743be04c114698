package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateBadFlags(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "file.txt", "x")
	out := filepath.Join(dir, "steps")
	for _, args := range [][]string{
		{"--steps", "0"},
		{"--dt", "-1"},
		{"--dt", "NaN"},
		{"--dt", "Inf"},
		{"--speed", "-5"},
		{"--speed", "NaN"},
		{"--min-speed", "10", "--speed", "5"},
		{"--replace", "1.5"},
		{"--replace", "-0.1"},
		{"--engine", "tpu"},
		{"--algo", "magic"},
		{"--algo", "seed", "--engine", "cpu"},
		{"--memory", "swap"},
		{"--gen", "lumpy"},
		{"--ref-gen", "Sphere"},
		{"--obs", "2^x"},
		{"--obs", "no-such-file.csv"},
		{"--ref", "0"},
		{"--gpus", "-1"},
		{"--validate", "-1"},
		{"--bogus"},
		{"extra"},
		{"--out-dir", file},
	} {
		full := append([]string{"simulate", "--obs", "100", "--ref", "10", "--steps", "2", "--engine", "cpu", "--out-dir", out}, args...)
		if _, _, err := runKnn(t, full...); err == nil {
			t.Errorf("%v: no error", args)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: --out-dir created", args)
		}
	}
}

// Step 1 answers the query knn run asks; every step's file is complete.
func TestSimulateOutDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "steps")
	stdout, stderr, err := runKnn(t, "simulate", "--obs", "500", "--ref", "20", "--steps", "3", "--dt", "600",
		"--replace", "0.1", "--engine", "cpu", "--out-dir", out, "--validate", "500")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.Contains(lines[0], "changed") || !strings.HasPrefix(strings.TrimSpace(lines[1]), "1 ") ||
		!strings.HasPrefix(strings.TrimSpace(lines[3]), "3 ") || !strings.Contains(lines[3], " 50 ") {
		t.Errorf("step lines:\n%s", stdout)
	}
	for _, want := range []string{"engine:       cpu", "steps:        3; query median", "validate:     step 3: 500 checked: 0 wrong", "wrote:        3 files"} {
		if !strings.Contains(stderr, want) || strings.Contains(stdout, want) {
			t.Errorf("the summary on stderr lacks %q:\n%s", want, stderr)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Fatalf("%d files in --out-dir, want 3", len(entries))
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if rows := strings.Split(strings.TrimSpace(string(b)), "\n"); rows[0] != "obs_index,ref_index,distance_m" || len(rows) != 501 {
			t.Errorf("%s: header %q, %d rows", e.Name(), rows[0], len(rows)-1)
		}
	}
	runOut := filepath.Join(dir, "run.csv")
	if _, stderr, err := runKnn(t, "run", "--obs", "500", "--ref", "20", "--engine", "cpu", "--out", runOut); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	a, _ := os.ReadFile(runOut)
	b, _ := os.ReadFile(filepath.Join(out, "step-0001.csv"))
	if !bytes.Equal(a, b) {
		t.Error("step 1 differs from knn run")
	}
	c, _ := os.ReadFile(filepath.Join(out, "step-0002.csv"))
	if bytes.Equal(b, c) {
		t.Error("step 2 is step 1 again")
	}
}

func TestSimulateQuietAndFiles(t *testing.T) {
	dir := t.TempDir()
	obs := write(t, dir, "obs.csv", "lat,lon\n0,0\n10,10\n-20,100\n")
	ref := write(t, dir, "ref.csv", "lat,lon\n0,1\n-20,101\n")
	stdout, stderr, err := runKnn(t, "simulate", "--obs", obs, "--ref", ref, "--steps", "12", "--speed", "0",
		"--engine", "cpu", "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stdout != "" || !strings.Contains(stderr, "steps:        12;") ||
		!strings.Contains(stderr, "observations: 3 ("+obs) || !strings.Contains(stderr, "speed 0-0 m/s") {
		t.Errorf("quiet output: stdout %q, stderr:\n%s", stdout, stderr)
	}
}
