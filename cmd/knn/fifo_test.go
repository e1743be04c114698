//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An input named as Parquet or Arrow that is a FIFO with no writer is
// opened as every other FIFO is, stoppably (#41 H1): SIGINT ends the run,
// convert included, with 130 and nothing written. Before, the name sent
// it to a plain open that no signal could end.
func TestFIFONamedArrowStoppable(t *testing.T) {
	bin := knnBinary(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"f.arrow", []string{"run", "--engine", "cpu", "-q", "--obs", "f.arrow", "--ref", "2^8", "--out", "o.csv"}},
		{"f.parquet", []string{"run", "--engine", "cpu", "-q", "--obs", "f.parquet", "--ref", "2^8", "--out", "o.parquet"}},
		{"f.arrow", []string{"run", "--engine", "cpu", "-q", "--obs", "2^8", "--ref", "f.arrow", "--out", "o.csv"}},
		{"f.parquet", []string{"convert", "f.parquet", "o.csv"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			if err := syscall.Mkfifo(filepath.Join(dir, tc.name), 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
			cmd, stderr := knnChild(t, bin, dir, nil, tc.args...)
			waitBlockedInOpen(cmd.Process.Pid)
			sent := time.Now()
			stopAndWait(t, cmd, stderr, syscall.SIGINT)
			t.Logf("stopped %v after SIGINT", time.Since(sent))
			if names, _ := os.ReadDir(dir); len(names) != 1 {
				t.Errorf("left behind: %v; stderr %q", names, stderr.String())
			}
		})
	}
}

// waitBlockedInOpen waits (10 s at most) until a thread of process pid
// is in openat, where a FIFO with no writer holds it: a signal sent
// earlier could come before the command handles signals, or test nothing.
func waitBlockedInOpen(pid int) {
	openat := map[string]string{"amd64": "257 ", "arm64": "56 "}[runtime.GOARCH]
	for t0 := time.Now(); time.Since(t0) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if openat == "" {
			time.Sleep(time.Second)
			return
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, task := range tasks {
			if b, err := os.ReadFile(task); err == nil && strings.HasPrefix(string(b), openat) {
				return
			}
		}
	}
}

// A FIFO whose name says no format (`<(cat x.parquet)`, a named pipe) is
// read by its content, as standard input is: Parquet is copied to a
// temporary file and read, streamed for --obs and whole for --ref and
// convert, with the answers of the regular file and no copy left behind.
func TestFIFOUnnamedParquetByContent(t *testing.T) {
	bin := knnBinary(t)
	dir := t.TempDir()
	tmp := t.TempDir()
	src := filepath.Join(dir, "c.parquet")
	cities := filepath.Join("..", "..", "testdata", "realdata", "cities.csv")
	airports := filepath.Join("..", "..", "testdata", "realdata", "airports.csv")
	if out, err := exec.Command(bin, "convert", cities, src).CombinedOutput(); err != nil {
		t.Fatalf("convert: %v\n%s", err, out)
	}
	want := filepath.Join(dir, "want.csv")
	if out, err := exec.Command(bin, "run", "--engine", "cpu", "-q", "--obs", src, "--ref", airports, "--out", want).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for i, args := range [][]string{
		{"run", "--engine", "cpu", "-q", "--obs", "FIFO", "--ref", airports, "--out", "OUT"},
		{"run", "--engine", "cpu", "-q", "--obs", cities, "--ref", "FIFO", "--out", "OUT"},
	} {
		fifo, out := filepath.Join(dir, fmt.Sprintf("pipe%d", i)), filepath.Join(dir, fmt.Sprintf("out%d.csv", i))
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		go func() {
			b, _ := os.ReadFile(src)
			os.WriteFile(fifo, b, 0)
		}()
		args = slices.Clone(args)
		for k := range args {
			args[k] = strings.NewReplacer("FIFO", fifo, "OUT", out).Replace(args[k])
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
		if i == 0 {
			got, _ := os.ReadFile(out)
			exp, _ := os.ReadFile(want)
			if !bytes.Equal(got, exp) {
				t.Errorf("--obs from a FIFO: %d bytes, want the regular file's %d", len(got), len(exp))
			}
		}
	}
	if names, _ := os.ReadDir(tmp); len(names) != 0 {
		t.Errorf("copies left behind: %v", names)
	}
}
