//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
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

// A streamed run's peak resident memory is set by its chunks, not by the
// observations: four times the points (2^22 against 2^20, chunks of 2^16)
// add less than a quarter of what holding them would (24 bytes a point),
// the collector run often so that the heap is what is live.
func TestStreamMemoryBound(t *testing.T) {
	bin := knnBinary(t)
	dir := t.TempDir()
	peak := func(n int) int64 {
		in := writeNPY(t, dir, n)
		debug.FreeOSMemory() // the child's peak counts this process's until it execs
		cmd := exec.Command(bin, "run", "--engine", "cpu", "-q", "--obs", in, "--ref", "2^8",
			"--chunk-rows", "65536", "--out", os.DevNull, "--out-format", "csv")
		cmd.Env = append(os.Environ(), "GOGC=10") // the heap near what is live
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		os.Remove(in)
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	small, large := peak(1<<20), peak(1<<22)
	if grown := large - small; grown > 24*(3<<20)/4 {
		t.Errorf("peak RSS %d MB at 2^20 points, %d MB at 2^22", small>>20, large>>20)
	}
	t.Logf("peak RSS %d MB at 2^20 points, %d MB at 2^22", small>>20, large>>20)
}
