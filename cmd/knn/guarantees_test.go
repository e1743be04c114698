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

// The guarantees (README "Guarantees"): nothing the user owns is
// overwritten or lost by any command, every output flag goes through one
// guard, bad settings are usage errors. These are the in-process checks;
// TestGuaranteesSignals signals real processes.

// copyFile copies the real-data sample to dir/name.
func copyFile(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, name, string(b))
}

var (
	sampleCities   = filepath.Join("..", "..", "testdata", "realdata", "cities.csv")
	sampleAirports = filepath.Join("..", "..", "testdata", "realdata", "airports.csv")
)

// unchanged fails unless path still holds want.
func unchanged(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s changed (%v)", path, err)
	}
}

// Every command's outputs are refused before any work when they are an
// input (by name, link or hard link), read-only, empty or each other.
func TestEveryOutputGuarded(t *testing.T) {
	dir := t.TempDir()
	obs := copyFile(t, sampleCities, dir, "obs.csv")
	ref := copyFile(t, sampleAirports, dir, "refs.csv")
	obsBody, _ := os.ReadFile(obs)
	refBody, _ := os.ReadFile(ref)
	ro := write(t, dir, "ro.json", "{}")
	os.Chmod(ro, 0o444)
	roPNG := write(t, dir, "ro.png", "png")
	os.Chmod(roPNG, 0o444)
	hard := filepath.Join(dir, "hard.csv")
	os.Link(obs, hard)
	link := filepath.Join(dir, "link.csv")
	os.Symlink("refs.csv", link)
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"run", "--obs", obs, "--ref", ref, "--out", hard}, 1, "is the input"},
		{[]string{"run", "--obs", obs, "--ref", ref, "--out", link, "--engine", "cpu"}, 1, "is the input"},
		{[]string{"run", "--obs", obs, "--ref", ref, "--out", ""}, 2, "--out ''"},
		{[]string{"run", "--obs", obs, "--ref", ref, "--trace", ""}, 2, "--trace ''"},
		{[]string{"run", "--obs", obs, "--ref", ref, "--trace", link}, 1, "is the input"},
		{[]string{"convert", obs, hard}, 1, "is the input"},
		{[]string{"convert", obs, ""}, 2, "empty file name"},
		{[]string{"bench", "--quick", "--engine", "cpu", "--gen", "cities", "--cities", obs, "--json", obs}, 1, "is the input"},
		{[]string{"bench", "--quick", "--engine", "cpu", "--json", ro}, 1, "read-only"},
		{[]string{"bench", "--quick", "--engine", "cpu", "--json", ""}, 2, "--json ''"},
		{[]string{"bench", "--from-json", ro, "--plot", ro}, 1, "is the input"},
		{[]string{"plot", "--grid", "--ref", "2^4", "--png", roPNG, "--width", "64"}, 1, "read-only"},
		{[]string{"plot", "--simulate", "--grid", "--ref", "2^4", "--gif", filepath.Join(dir, "a.gif"), "--strip", filepath.Join(dir, ".", "x.png"), "--png", filepath.Join(dir, "x.png"), "--width", "64"}, 1, "name the same file"},
		{[]string{"simulate", "--obs", obs, "--ref", "2^4", "--steps", "2", "--out-dir", ""}, 2, "--out-dir ''"},
	} {
		status, _, stderr := mainFor(tc.args...)
		if status != tc.status || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", tc.args, status, stderr, tc.status, tc.want)
		}
	}
	unchanged(t, obs, obsBody)
	unchanged(t, ref, refBody)
	unchanged(t, ro, []byte("{}"))
	unchanged(t, roPNG, []byte("png"))
}

// simulate refuses, before the first step, an --out-dir holding a file it
// would write: its own --obs, a link onto --ref, a read-only file, or an
// earlier run's step; it adds its files to a folder holding others.
func TestSimulateOutDirGuarded(t *testing.T) {
	dir := t.TempDir()
	ref := copyFile(t, sampleAirports, dir, "refs.csv")
	out := filepath.Join(dir, "d")
	os.Mkdir(out, 0o777)
	obs := copyFile(t, sampleCities, out, "step-0001.csv")
	obsBody, _ := os.ReadFile(obs)
	sim := func(obsArg string) (int, string) {
		status, _, stderr := mainFor("simulate", "--obs", obsArg, "--ref", ref, "--steps", "3", "--engine", "cpu", "-q", "--out-dir", out)
		return status, stderr
	}
	if status, stderr := sim(obs); status != 1 || !strings.Contains(stderr, "is the input") {
		t.Errorf("own --obs: %d %q", status, stderr)
	}
	unchanged(t, obs, obsBody)
	os.Rename(obs, filepath.Join(dir, "obs.csv"))
	obs = filepath.Join(dir, "obs.csv")
	os.Symlink(filepath.Join("..", "refs.csv"), filepath.Join(out, "step-0002.csv"))
	if status, stderr := sim(obs); status != 1 || !strings.Contains(stderr, "is the input") {
		t.Errorf("link onto --ref: %d %q", status, stderr)
	}
	os.Remove(filepath.Join(out, "step-0002.csv"))
	ro := write(t, out, "step-0003.csv", "mine")
	os.Chmod(ro, 0o444)
	if status, stderr := sim(obs); status != 1 || !strings.Contains(stderr, "read-only") {
		t.Errorf("read-only step: %d %q", status, stderr)
	}
	unchanged(t, ro, []byte("mine"))
	os.Chmod(ro, 0o644)
	if status, stderr := sim(obs); status != 1 || !strings.Contains(stderr, "already holds step-0003.csv") {
		t.Errorf("earlier step: %d %q", status, stderr)
	}
	unchanged(t, ro, []byte("mine"))
	os.Remove(ro)
	keep := write(t, out, "notes.txt", "keep")
	if status, stderr := sim(obs); status != 0 {
		t.Fatalf("into a folder with other files: %d %q", status, stderr)
	}
	unchanged(t, keep, []byte("keep"))
	names, _ := os.ReadDir(out)
	if len(names) != 4 {
		t.Errorf("--out-dir holds %v, want notes.txt and 3 steps", names)
	}
	unchanged(t, ref, mustRead(t, sampleAirports))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Bad settings are usage errors (exit 2), the --k rule the API's: a k
// above the references is refused, naming both.
func TestSettingsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--within-m", "NaN"}, "--within-m NaN"},
		{[]string{"--within-m", "+Inf"}, "--within-m +Inf"},
		{[]string{"--within-m", "-1"}, "--within-m -1"},
		{[]string{"--k", "2", "--max-m", "NaN"}, "--max-m NaN"},
		{[]string{"--k", "1099511627776"}, "--k 1099511627776: more than the 1027 references"},
		{[]string{"--k", "1027", "--exclude-self"}, "more than the 1026 references other than"},
	} {
		args := append([]string{"run", "--engine", "cpu", "-q", "--obs", sampleAirports, "--ref", sampleAirports, "--out", "-"}, tc.args...)
		status, stdout, stderr := mainFor(args...)
		if status != 2 || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: status %d, stderr %q, %d bytes out; want 2 and %q", tc.args, status, stderr, len(stdout), tc.want)
		}
	}
	if status, _, stderr := mainFor("run", "--engine", "cpu", "-q", "--obs", sampleAirports, "--ref", sampleAirports, "--k", "1027", "--out", os.DevNull); status != 0 {
		t.Errorf("--k equal to the references: %d %q", status, stderr)
	}
}

// A plan beyond the host's memory is refused before any work, naming the
// estimate, its parts and the limit.
func TestPlanMemoryRefused(t *testing.T) {
	status, _, stderr := mainFor("run", "--engine", "cpu", "--obs", "2^28", "--ref", "2147483647")
	if status == 0 || !strings.Contains(stderr, "references and their index") || !strings.Contains(stderr, "available on this host") {
		t.Skipf("no refusal (%d %q): this host reports no available memory", status, stderr)
	}
}

// knnChild starts the binary with args, stdin from in (nil: none), in
// dir.
func knnChild(t *testing.T, bin, dir string, in io.Reader, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// stopAndWait signals cmd and checks that it stops within 10 s (a
// generous bound on a loaded machine) with 128 + the signal.
func stopAndWait(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer, sig syscall.Signal) {
	t.Helper()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("no exit within 10 s of %v; stderr %q", sig, stderr.String())
	}
	if got, want := cmd.ProcessState.ExitCode(), 128+int(sig); got != want {
		t.Errorf("status %d, want %d; stderr %q", got, want, stderr.String())
	}
}

// Real processes: outputs onto standard input's file through /dev/stdin
// and /dev/fd/0 are refused; a signal stops bench, simulate and a read of
// a quiet pipe, leaving nothing written.
func TestGuaranteesSignals(t *testing.T) {
	bin := knnBinary(t)
	dir := t.TempDir()
	obs := copyFile(t, sampleCities, dir, "obs.csv")
	ref := copyFile(t, sampleAirports, dir, "refs.csv")
	obsBody := mustRead(t, obs)
	t.Run("stdin as output", func(t *testing.T) {
		for _, args := range [][]string{
			{"run", "--engine", "cpu", "-q", "--obs", "-", "--ref", ref, "--out", "/dev/stdin"},
			{"run", "--engine", "cpu", "-q", "--obs", "-", "--ref", ref, "--out", "/dev/fd/0", "--out-format", "npz"},
			{"convert", "-", "/proc/self/fd/0"},
		} {
			f, _ := os.Open(obs)
			cmd, stderr := knnChild(t, bin, dir, f, args...)
			cmd.Wait()
			f.Close()
			if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "is the input standard input") {
				t.Errorf("%v: status %d, %q", args, cmd.ProcessState.ExitCode(), stderr.String())
			}
			unchanged(t, obs, obsBody)
		}
	})
	t.Run("stdin pipe as output", func(t *testing.T) {
		for _, args := range [][]string{
			{"run", "--engine", "cpu", "-q", "--obs", "-", "--ref", ref, "--out", "/dev/stdin"},
			{"convert", "-", "/dev/fd/0"},
		} {
			// A pipe, not a file: written into, it would never end.
			cmd, stderr := knnChild(t, bin, dir, bytes.NewReader(obsBody), args...)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%v: no exit within 20 s", args)
			}
			if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "is the input standard input") {
				t.Errorf("%v: status %d, %q", args, cmd.ProcessState.ExitCode(), stderr.String())
			}
		}
	})
	t.Run("stdin named", func(t *testing.T) {
		pq := filepath.Join(dir, "obs.parquet")
		if status, _, stderr := mainFor("convert", obs, pq); status != 0 {
			t.Fatal(stderr)
		}
		b := mustRead(t, pq)
		cmd, stderr := knnChild(t, bin, dir, bytes.NewReader(b[:len(b)/2]), "run", "--engine", "cpu", "-q", "--obs", "-", "--ref", ref)
		cmd.Wait()
		if e := stderr.String(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(e, "standard input") || strings.Contains(e, "knn-stdin") {
			t.Errorf("status %d, %q: want standard input named", cmd.ProcessState.ExitCode(), e)
		}
	})
	t.Run("quiet pipe", func(t *testing.T) {
		pr, pw, _ := os.Pipe()
		defer pw.Close()
		cmd, stderr := knnChild(t, bin, dir, pr, "run", "--engine", "cpu", "-q", "--obs", "-", "--ref", ref, "--out", "piped.csv")
		pr.Close()
		pw.Write(obsBody[:4096]) // then silence, the pipe open
		time.Sleep(300 * time.Millisecond)
		stopAndWait(t, cmd, stderr, syscall.SIGTERM)
		if _, err := os.Stat(filepath.Join(dir, "piped.csv")); err == nil {
			t.Error("output written")
		}
	})
	t.Run("bench", func(t *testing.T) {
		sub := t.TempDir()
		cmd, stderr := knnChild(t, bin, sub, nil, "bench", "--engine", "cpu", "-q", "--algo", "brute", "--obs", "2^22", "--ref", "2^12", "--json", "b.json", "--plot", "b.png")
		time.Sleep(500 * time.Millisecond)
		stopAndWait(t, cmd, stderr, syscall.SIGINT)
		if names, _ := os.ReadDir(sub); len(names) != 0 {
			t.Errorf("left behind: %v", names)
		}
	})
	t.Run("simulate", func(t *testing.T) {
		sub := t.TempDir()
		old := filepath.Join(sub, "d")
		os.Mkdir(old, 0o777)
		write(t, old, "notes.txt", "keep")
		for _, out := range []string{"new", "d"} {
			cmd, stderr := knnChild(t, bin, sub, nil, "simulate", "--engine", "cpu", "-q", "--obs", "2^16", "--ref", "2^8", "--steps", "100000", "--out-dir", out)
			// Signalled once a step is written, in the temporary folder.
			for t0 := time.Now(); time.Since(t0) < 20*time.Second; time.Sleep(10 * time.Millisecond) {
				a, _ := filepath.Glob(filepath.Join(sub, "*", "step-*.csv"))
				b, _ := filepath.Glob(filepath.Join(sub, "*", "*", "step-*.csv"))
				if len(a)+len(b) > 0 {
					break
				}
			}
			stopAndWait(t, cmd, stderr, syscall.SIGTERM)
		}
		names, _ := os.ReadDir(sub)
		kept, _ := os.ReadDir(old)
		if len(names) != 1 || len(kept) != 1 {
			t.Errorf("left behind: %v, in d: %v", names, kept)
		}
	})
}

// The answers made while the engine starts: a nearest query's always, a
// k-nearest query's k (one more with --exclude-self) a row where the
// later checks pass, none where they will refuse; and the plan's memory,
// checked again once they are held, no longer counts them as to take.
func TestAnswerMemory(t *testing.T) {
	for _, c := range []struct {
		args    []string
		nearest bool
		k       int
	}{
		{[]string{}, true, 0},
		{[]string{"--k", "3"}, false, 3},
		{[]string{"--k", "3", "--exclude-self"}, false, 4},
		{[]string{"--k", "65"}, false, 0},          // above the 64 references
		{[]string{"--within-m", "1000"}, false, 0}, // counts: sized by the engine
	} {
		var f runFlags
		if err := f.flagSet(io.Discard).Parse(append([]string{"--obs", sampleAirports, "--ref", sampleAirports}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.options(); err != nil {
			t.Fatal(err)
		}
		res, kres := f.answerMemory(100, 64, true, nil)
		if (res != nil) != c.nearest || (kres != nil) != (c.k > 0) {
			t.Errorf("%v: result %v, k result %v", c.args, res != nil, kres != nil)
			continue
		}
		if kres != nil && (kres.K != c.k || len(kres.Index) != 100*c.k || len(kres.DistanceRad) != 100*c.k) {
			t.Errorf("%v: K %d, %d entries, want K %d", c.args, kres.K, len(kres.Index), c.k)
		}
		in := &runInputs{res: res, kres: kres}
		if err := f.checkPlanMemoryHeld(100, 64, true, in.answerBytes()); err != nil {
			t.Errorf("%v: %v", c.args, err)
		}
	}
}
