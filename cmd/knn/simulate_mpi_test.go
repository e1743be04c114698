package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// simulate --mpi on 1-3 ranks (Open MPI; 2 under MPICH) prints the table
// one process prints, times aside, and writes the same step files (npz,
// Parquet and CSV by every rank at its offsets, Arrow gathered):
// generated observations of an indexed generator (made inside the session
// by one process, on the host by the ranks) and of clustered points, and
// files scattered from rank 0.
func TestSimulateMPI(t *testing.T) {
	ls := launchers(t)
	bin := knnBinary(t)
	data := filepath.Join("..", "..", "testdata", "realdata")
	cases := [][]string{
		{"--obs", "30001", "--ref", "200", "--steps", "4", "--replace", "0.05", "--out-format", "npz"},
		{"--obs", "30001", "--ref", "200", "--steps", "3", "--replace", "0.1", "--gen", "clustered", "--out-format", "parquet"},
		{"--obs", "5001", "--ref", "50", "--steps", "2", "--replace", "0.1", "--out-format", "arrow"},
		{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv"), "--steps", "3", "--replace", "0.02", "--speed", "900", "--dt", "3600"},
	}
	for ci, args := range cases {
		dir := t.TempDir()
		one := filepath.Join(dir, "one")
		want, err := exec.Command(bin, append([]string{"simulate", "--engine", "cpu", "--out-dir", one}, args...)...).Output()
		if err != nil {
			t.Fatalf("case %d: %v", ci, err)
		}
		if c := countColumns(string(want)); !strings.Contains(c, "changed%") || strings.Count(c, "\n") < 3 {
			t.Fatalf("case %d: no table:\n%s", ci, want)
		}
		for li, l := range ls {
			for np := 1; np <= 3; np++ {
				if li > 0 && np != 2 {
					continue
				}
				got := filepath.Join(dir, "mpi")
				cmdArgs := append([]string{"simulate", "--mpi", "--engine", "cpu", "--out-dir", got}, args...)
				table, stderr, err := l.output(t, bin, np, cmdArgs...)
				if err != nil {
					t.Fatalf("case %d, %s -np %d: %v\n%s", ci, filepath.Base(l.name), np, err, stderr)
				}
				if a, b := countColumns(string(want)), countColumns(table); a != b {
					t.Errorf("case %d, %s -np %d: table\n%s\nwant\n%s", ci, filepath.Base(l.name), np, b, a)
				}
				sameFolders(t, one, got)
				os.RemoveAll(got)
			}
		}
	}
}

// countColumns is a step table without its times: step, time_s,
// replaced, changed, changed%.
func countColumns(table string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(line)
		if len(f) == 10 {
			b.WriteString(strings.Join([]string{f[0], f[1], f[7], f[8], f[9]}, " ") + "\n")
		}
	}
	return b.String()
}

// sameFolders checks that got holds want's files, byte for byte.
func sameFolders(t *testing.T, want, got string) {
	t.Helper()
	names, err := os.ReadDir(want)
	if err != nil || len(names) == 0 {
		t.Fatalf("%s: %v (%d files)", want, err, len(names))
	}
	for _, e := range names {
		a, _ := os.ReadFile(filepath.Join(want, e.Name()))
		b, err := os.ReadFile(filepath.Join(got, e.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from one process's (%v)", filepath.Join(got, e.Name()), err)
		}
	}
}
