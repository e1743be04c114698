//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Radius lists held whole that need more memory than the process may
// take are refused before they are found (#41 C4: under ulimit -v the
// run died with Go's fatal out of memory and a temporary left): exit 1,
// the figure and the limit named, nothing written.
func TestWithinListsMemoryRefused(t *testing.T) {
	bin := knnBinary(t)
	dir := t.TempDir()
	// 2^16 x 2^12 within 20,000 km: 2^28 entries, 6 GB, under a 3 GB
	// address space.
	cmd := exec.Command("sh", "-c", "ulimit -v 3000000 && exec \"$0\" \"$@\"", bin, "run", "--engine", "cpu", "-q",
		"--obs", "2^16", "--ref", "2^12", "--within-m", "20000000", "--list", "--out", "o.csv")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "list entries need about") {
		t.Fatalf("%v: %s", err, out)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
	if _, err := os.Stat(filepath.Join(dir, "o.csv")); err == nil {
		t.Error("o.csv written")
	}
}
