package main

import (
	"os"
	"os/exec"
	"runtime/debug"
	"syscall"
	"testing"
)

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
