package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runWithStdout runs the built command with its standard output on f.
func runWithStdout(t *testing.T, bin string, f *os.File, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// Standard output, whatever its spelling, is written through descriptor 1:
// a file behind ">>" keeps what it held, and one shared by a "{ ...; } >"
// group keeps the lines before and after (#41 F4). Standard output that is
// one of the inputs is refused, the input untouched (#41 F3).
func TestStdoutOutput(t *testing.T) {
	bin := knnBinary(t)
	dir := t.TempDir()
	obsBody := "lat,lon\n47.37,8.54\n46.2,6.14\n"
	obs := write(t, dir, "obs.csv", obsBody)
	ref := write(t, dir, "ref.csv", "lat,lon\n47.46,8.55\n46.24,6.11\n")
	run := []string{"run", "--obs", obs, "--ref", ref, "--engine", "cpu", "--quiet", "--out"}
	for _, out := range []string{"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		log := write(t, dir, "log.txt", "important\n")
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		status, errOut := runWithStdout(t, bin, f, append(run, out)...)
		f.WriteString("end\n")
		f.Close()
		b, _ := os.ReadFile(log)
		if status != 0 || !strings.HasPrefix(string(b), "important\nobs_index,") || !strings.HasSuffix(string(b), "\nend\n") {
			t.Errorf("--out %s >> log.txt: status %d, log %q; %s", out, status, b, errOut)
		}
	}
	for _, out := range []string{"-", "/dev/stdout"} {
		f, err := os.OpenFile(obs, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		status, errOut := runWithStdout(t, bin, f, append(run, out)...)
		f.Close()
		b, _ := os.ReadFile(obs)
		if status == 0 || string(b) != obsBody || !strings.Contains(errOut, filepath.Base(obs)) {
			t.Errorf("--out %s >> obs.csv: status %d, obs.csv %q; %s", out, status, b, errOut)
		}
	}
}
