package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ranks started with different flags refuse before any work, naming the
// first that differs (exit 2), under Open MPI and MPICH; no output.
func TestRunMPIMixedFlags(t *testing.T) {
	ls := launchers(t)
	bin := knnBinary(t)
	dir := t.TempDir()
	// Rank 1 gets one more flag than rank 0.
	wrapper := filepath.Join(dir, "knn-mixed")
	script := "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK$PMI_RANK\" = 1 ]; then exec " + bin + " \"$@\" --k 3; fi\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		out := filepath.Join(dir, "o.csv")
		stderr, err := l.run(t, wrapper, 2, "run", "--mpi", "--engine", "cpu", "-q", "--obs", "2^12", "--ref", "2^8", "--out", out)
		if err == nil || !strings.Contains(stderr, `rank 1 has --k "3", rank 0 --k "1"`) {
			t.Errorf("%s: %v, stderr:\n%s", l.name, err, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: output written", l.name)
		}
	}
}

// SIGTERM to mpirun stops every rank within seconds and writes nothing;
// the ranks end with 143, which MPICH's mpirun passes on (Open MPI's
// reports its own status, 1, when it is the one signalled).
func TestRunMPISignal(t *testing.T) {
	ls := launchers(t)
	bin := knnBinary(t)
	for _, l := range ls {
		dir := t.TempDir()
		args := append(append(append([]string{}, l.args...), "-np", "2", bin), "run", "--mpi", "--engine", "cpu", "-q",
			"--algo", "brute", "--obs", "2^22", "--ref", "2^14", "--out", "o.parquet")
		var stderr bytes.Buffer
		cmd := terminated(t, l, dir, args, &stderr, 1500*time.Millisecond)
		status := cmd.ProcessState.ExitCode()
		if status == 0 || (strings.Contains(l.name, "mpich") && status != 143) {
			t.Errorf("%s: status %d; stderr:\n%s", l.name, status, stderr.String())
		}
		if names, _ := os.ReadDir(dir); len(names) != 0 {
			t.Errorf("%s: left behind %v", l.name, names)
		}
	}
}

// A rank that cannot write its part of --out (rank 1's files limited to
// 4 KiB) fails the job, non-zero, naming the error; no output and no
// temporary file is left, for a format written after the lengths'
// exchange (CSV) and one at computed offsets (npz). Open MPI alone:
// MPICH's UCX shared memory does not start under the limit.
func TestRunMPIWriteFailure(t *testing.T) {
	ls := launchers(t)[:1]
	bin := knnBinary(t)
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "knn-small-files")
	script := "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK$PMI_RANK\" = 1 ]; then ulimit -f 8; fi\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		for _, ext := range []string{"csv", "npz"} {
			work := t.TempDir()
			out := filepath.Join(work, "o."+ext)
			stderr, err := l.run(t, wrapper, 3, "run", "--mpi", "--engine", "cpu", "-q", "--obs", "50001", "--ref", "2^8", "--out", out)
			if err == nil || !strings.Contains(stderr, "file too large") {
				t.Errorf("%s, %s: %v, stderr:\n%s", l.name, ext, err, stderr)
			}
			if names, _ := os.ReadDir(work); len(names) != 0 {
				t.Errorf("%s, %s: left behind %v", l.name, ext, names)
			}
		}
	}
}

// SIGTERM to mpirun during simulate --mpi with step files stops every
// rank and leaves no step file, no folder, under Open MPI and MPICH.
func TestSimulateMPISignal(t *testing.T) {
	ls := launchers(t)
	bin := knnBinary(t)
	for _, l := range ls {
		dir := t.TempDir()
		args := append(append(append([]string{}, l.args...), "-np", "2", bin), "simulate", "--mpi", "--engine", "cpu", "-q",
			"--obs", "2^21", "--ref", "2^10", "--steps", "200", "--replace", "0.01", "--out-dir", "steps", "--out-format", "npz")
		cmd := terminated(t, l, dir, args, nil, 2*time.Second)
		if cmd.ProcessState.ExitCode() == 0 {
			t.Errorf("%s: exit status 0 after SIGTERM", l.name)
		}
		if names, _ := os.ReadDir(dir); len(names) != 0 {
			t.Errorf("%s: left behind %v", l.name, names)
		}
	}
}

// terminated runs launcher l with args in dir (its stderr to stderr, when
// not nil), sends it SIGTERM after d, and waits at most 30 s for it to
// end; it returns the ended command.
func terminated(t *testing.T, l launcher, dir string, args []string, stderr io.Writer, d time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(l.name, args...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, os.Environ(), stderr
	if l.lib != "" {
		cmd.Env = append(cmd.Env, "GEOKNN_MPI_LIB="+l.lib)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: no exit within 30 s of SIGTERM", l.name)
	}
	return cmd
}
