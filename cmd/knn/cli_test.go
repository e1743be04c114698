package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mainFor runs the command line as main does and returns its exit status
// and output.
func mainFor(args ...string) (status int, stdout, stderr string) {
	var o, e bytes.Buffer
	status = mainExit(args, &o, &e)
	return status, o.String(), e.String()
}

func TestExitStatusAndStreams(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.csv", "lat,lon\n91,0\n")
	for _, tc := range []struct {
		args     []string
		status   int
		out, err string // substrings of stdout and stderr
		quietOut bool   // nothing on stdout
	}{
		{[]string{"--help"}, 0, "Usage:", "", false},
		{[]string{"run", "--help"}, 0, "Usage: knn run", "", false},
		{[]string{"simulate", "-h"}, 0, "Usage: knn simulate", "", false},
		{[]string{"version"}, 0, "GPUs: ", "", false},
		{[]string{"version"}, 0, "knn " + moduleVersion + ", commit ", "", false},
		{[]string{"--version"}, 0, "knn ", "", false},
		{[]string{}, 2, "", "Usage:", true},
		{[]string{"nope"}, 2, "", `unknown command "nope"`, true},
		{[]string{"run", "--nope"}, 2, "", "knn: run: unknown flag --nope\nknn: see 'knn help run' for every flag\n", true},
		{[]string{"run", "--obs", "a.csv", "--ref", "b.csv", "--outt", "x.csv"}, 2, "", "unknown flag --outt (did you mean --out?)\n", true},
		{[]string{"run", "--k", "x"}, 2, "", `run: --k "x": want a whole number`, true},
		{[]string{"run", "--obs", "2^4", "--ref", "2^3", "--list"}, 2, "", "--list lists the references within a radius: give --within-m METRES too\n", true},
		{[]string{"run", "--obs", "2^4", "--ref", "2^3", "--k", "0"}, 2, "", "--k 0: want 1 or more nearest references\n", true},
		{[]string{"run", "--obs", "2^4", "--ref", "2^3", "--k", "3", "--within-m", "5000"}, 2, "", "--k 3 with --within-m: a radius query", true},
		{[]string{"rn"}, 2, "", `unknown command "rn" (did you mean run?)`, true},
		{[]string{"run", "--obs", "2^10"}, 2, "", "--obs and --ref are required", true},
		{[]string{"run", "--obs", "2^10", "--ref", "2^4", "stray"}, 2, "", "unexpected argument", true},
		{[]string{"run", "--obs", bad, "--ref", "2^4"}, 1, "", "latitude", true},
		{[]string{"run", "--obs", filepath.Join(dir, "none.csv"), "--ref", "2^4"}, 1, "", "no such file", true},
		{[]string{"run", "--obs", "2^10", "--ref", "2^33", "--engine", "cpu"}, 2, "", "more than the 2147483647", true},
		{[]string{"run", "--obs", "2^40", "--ref", "2^4", "--engine", "cpu"}, 1, "", "of memory needed", true},
	} {
		status, out, errOut := mainFor(tc.args...)
		if status != tc.status || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) || (tc.quietOut && out != "") {
			t.Errorf("knn %q: status %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, status, out, errOut, tc.status, tc.out, tc.err)
		}
	}
}

// --out is checked before any work, and nothing the user owns is replaced.
func TestOutputChecksAndDevices(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "in.csv", "lat,lon\n1,2\n3,4\n")
	ref := write(t, dir, "ref.csv", "lat,lon\n1,2\n")
	for _, tc := range []struct {
		out, want string
	}{
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "o.csv"), "no such file"},
		{in, "is the input"},
	} {
		t0 := time.Now()
		status, _, errOut := mainFor("run", "--obs", in, "--ref", ref, "--engine", "cpu", "--out", tc.out)
		if status != 1 || !strings.Contains(errOut, tc.want) || time.Since(t0) > 2*time.Second {
			t.Errorf("--out %s: status %d, %q", tc.out, status, errOut)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "lat,lon\n1,2\n3,4\n" {
		t.Errorf("the input was changed: %q", b)
	}
	if status, _, errOut := mainFor("run", "--obs", in, "--ref", ref, "--engine", "cpu", "--out", "/dev/null"); status != 0 {
		t.Errorf("--out /dev/null: %d %s", status, errOut)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatal("/dev/null was replaced")
	}
	status, out, _ := mainFor("run", "--obs", in, "--ref", ref, "--engine", "cpu", "--out", "-")
	if status != 0 || !strings.HasPrefix(out, "obs_index,ref_index,distance_m\n0,0,0.000\n") {
		t.Errorf("--out -: %d %q", status, out)
	}
}

// A bare name that is both a count and a file is refused; ./name is the
// file.
func TestCountOrFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "1000", "lat,lon\n1,2\n")
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if status, _, errOut := mainFor("run", "--obs", "1000", "--ref", "2^4", "--engine", "cpu"); status != 2 || !strings.Contains(errOut, "./1000") {
		t.Errorf("ambiguous: %d %q", status, errOut)
	}
	if status, _, errOut := mainFor("run", "--obs", "./1000", "--ref", "2^4", "--engine", "cpu"); status != 0 {
		t.Errorf("./1000: %d %q", status, errOut)
	}
}

// knnBinary builds the command once for the tests that signal a real
// process.
func knnBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command: skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "knn")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// SIGINT and SIGTERM stop a run within a second in the query and in the
// write, with 130 and 143, and leave no file behind.
func TestSignals(t *testing.T) {
	bin := knnBinary(t)
	for _, tc := range []struct {
		name    string
		sig     syscall.Signal
		args    []string
		trigger func(dir string) bool // signal once this holds
	}{
		{"SIGTERM in the query", syscall.SIGTERM, []string{"--obs", "2^22", "--ref", "2^16", "--algo", "brute"}, nil},
		{"SIGINT in the query", syscall.SIGINT, []string{"--obs", "2^22", "--ref", "2^16", "--algo", "brute"}, nil},
		{"SIGTERM in the write", syscall.SIGTERM, []string{"--obs", "2^24", "--ref", "2^4"}, tempFileAppeared},
		// A closed terminal cleans up as SIGTERM does (#41 C1).
		{"SIGHUP in the write", syscall.SIGHUP, []string{"--obs", "2^24", "--ref", "2^4"}, tempFileAppeared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "--engine", "cpu", "--quiet", "--out", filepath.Join(dir, "o.csv")}, tc.args...)
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(tc.trigger, dir)
			sent := time.Now()
			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			took := time.Since(sent)
			status := cmd.ProcessState.ExitCode()
			if want := 128 + int(tc.sig); status != want || took > 1500*time.Millisecond {
				t.Errorf("status %d after %v (%v), want %d within a second; stderr %q", status, took, err, want, stderr.String())
			}
			if !strings.Contains(stderr.String(), "stopped by") {
				t.Errorf("stderr %q has no reason", stderr.String())
			}
			if names, _ := os.ReadDir(dir); len(names) != 0 {
				t.Errorf("left behind: %v", names)
			}
		})
	}
}

// waitFor waits until cond(dir) holds (at most 20 s), or 300 ms when cond
// is nil.
func waitFor(cond func(string) bool, dir string) {
	if cond == nil {
		time.Sleep(300 * time.Millisecond)
		return
	}
	for t0 := time.Now(); time.Since(t0) < 20*time.Second && !cond(dir); {
		time.Sleep(5 * time.Millisecond)
	}
}

func tempFileAppeared(dir string) bool {
	names, _ := filepath.Glob(filepath.Join(dir, ".o.csv.tmp-*"))
	return len(names) > 0
}

// k nearest, radius and self-excluding queries, validated against brute
// force, in their CSV forms.
func TestNeighbourQueries(t *testing.T) {
	dir := t.TempDir()
	obs := write(t, dir, "obs.csv", "lat,lon\n47.37,8.54\n46.2,6.14\n51.5,-0.12\n")
	ref := write(t, dir, "ref.csv", "lat,lon\n47.46,8.55\n46.24,6.11\n51.47,-0.45\n48.35,11.78\n")
	for _, tc := range []struct {
		args   []string
		header string
		lines  int
	}{
		{[]string{"--k", "2"}, "obs_index,rank,ref_index,distance_m", 6},
		{[]string{"--k", "2", "--max-m", "30000"}, "obs_index,rank,ref_index,distance_m", 3},
		{[]string{"--within-m", "300000"}, "obs_index,count", 3},
		{[]string{"--within-m", "300000", "--list"}, "obs_index,ref_index,distance_m", 6},
	} {
		args := append([]string{"run", "--obs", obs, "--ref", ref, "--engine", "cpu", "--validate", "10", "-o", "-"}, tc.args...)
		status, out, errOut := mainFor(args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if status != 0 || lines[0] != tc.header || len(lines)-1 != tc.lines || !strings.Contains(errOut, ": 0 wrong") {
			t.Errorf("%v: status %d, %d lines %q; %s", tc.args, status, len(lines)-1, out, errOut)
		}
	}
	for _, obsName := range []string{ref, filepath.Dir(ref) + "/./" + filepath.Base(ref)} {
		status, out, _ := mainFor("run", "--obs", obsName, "--ref", ref, "--engine", "cpu", "--exclude-self", "-o", "-")
		if status != 0 || !strings.HasPrefix(out, "obs_index,ref_index,distance_m\n0,1,229838.152\n1,0,") {
			t.Errorf("--exclude-self --obs %s: %d %q", obsName, status, out)
		}
	}
	for _, bad := range [][]string{{"--list"}, {"--k", "0"}, {"--k", "2", "--within-m", "5"}, {"--exclude-self"}} {
		args := append([]string{"run", "--obs", obs, "--ref", ref, "--engine", "cpu"}, bad...)
		if status, _, _ := mainFor(args...); status != 2 {
			t.Errorf("%v: status %d, want 2", bad, status)
		}
	}
}

// Answers go to the format --out names: Parquet files read back as the
// CSV's rows; an unknown extension is refused before any work (exit 2, no
// file); standard input is read with --obs -.
func TestOutputFormatsAndStdin(t *testing.T) {
	dir := t.TempDir()
	ref := write(t, dir, "ref.csv", "lat,lon\n0,0\n10,10\n-20,30\n")
	obs := write(t, dir, "obs.csv", "lat,lon\n1,1\n9,9\n-19,29\n")
	for _, name := range []string{"a.parquet", "k.parquet"} {
		args := []string{"run", "--obs", obs, "--ref", ref, "--engine", "cpu", "-q", "--out", filepath.Join(dir, name)}
		if name == "k.parquet" {
			args = append(args, "--k", "2")
		}
		if status, _, stderr := mainFor(args...); status != 0 {
			t.Fatalf("%s: exit %d: %s", name, status, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.HasPrefix(b, []byte("PAR1")) || !bytes.HasSuffix(b, []byte("PAR1")) {
			t.Errorf("%s is not a Parquet file (%v)", name, err)
		}
	}
	status, _, stderr := mainFor("run", "--obs", obs, "--ref", ref, "--out", filepath.Join(dir, "a.csv.gz"))
	if _, err := os.Stat(filepath.Join(dir, "a.csv.gz")); status != 2 || !strings.Contains(stderr, `unknown format ".gz"`) || err == nil {
		t.Errorf("--out a.csv.gz: exit %d, %q", status, stderr)
	}

	withStdin(t, []byte("lat,lon\n9,9\n"))
	status, stdout, stderr := mainFor("run", "--obs", "-", "--ref", ref, "--engine", "cpu", "-q", "--out", "-")
	if status != 0 || stdout != "obs_index,ref_index,distance_m\n0,1,156177.907\n" {
		t.Errorf("--obs -: exit %d, %q, %q", status, stdout, stderr)
	}
}

// knn convert writes every format so that the points read back the same:
// the query's answers are byte for byte those of the original file.
func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	obs := write(t, dir, "obs.csv", "name,latitude,longitude\n\"a, b\",47.376887,8.541694\nc,-33.8688,151.20929\nd,0.1,-179.99\n")
	ref := write(t, dir, "ref.csv", "lat,lon\n0,0\n45,10\n-30,150\n1,180\n")
	answers := func(in string) string {
		out := filepath.Join(dir, "answers-"+filepath.Base(in)+".csv")
		if status, _, stderr := mainFor("run", "--obs", in, "--ref", ref, "--engine", "cpu", "-q", "--out", out); status != 0 {
			t.Fatalf("%s: exit %d: %s", in, status, stderr)
		}
		b, _ := os.ReadFile(out)
		return string(b)
	}
	want := answers(obs)
	for _, name := range []string{"p.parquet", "p.arrow", "p.npy", "p.npz", "p.csv"} {
		to := filepath.Join(dir, name)
		if status, _, stderr := mainFor("convert", obs, to); status != 0 {
			t.Fatalf("convert to %s: exit %d: %s", name, status, stderr)
		}
		if got := answers(to); got != want {
			t.Errorf("%s: answers\n%s\nwant\n%s", name, got, want)
		}
	}
	if status, _, _ := mainFor("convert", obs, obs); status == 0 {
		t.Error("convert over its input succeeded")
	}
}

// --obs-id and --ref-id carry identifier columns into every query kind's
// CSV, and into Parquet and .npz; synthetic points refuse them.
func TestIdsCarriedThrough(t *testing.T) {
	dir := t.TempDir()
	obs := write(t, dir, "obs.csv", "name,lat,lon\n\"Zürich, CH\",47.37,8.54\n,,\nSydney,-33.87,151.21\n")
	ref := write(t, dir, "ref.csv", "code,lat,lon\nZRH,47.46,8.55\nSYD,-33.95,151.18\nBSL,47.6,7.53\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "obs_index,obs_id,ref_index,ref_id,distance_m\n0,\"Zürich, CH\",0,ZRH,10035.804\n1,Sydney,1,SYD,9316.451\n"},
		{[]string{"--k", "2"}, "obs_index,obs_id,rank,ref_index,ref_id,distance_m\n0,\"Zürich, CH\",1,0,ZRH,10035.804\n0,\"Zürich, CH\",2,2,BSL,80087.700\n"},
		{[]string{"--within-m", "100000"}, "obs_index,obs_id,count\n0,\"Zürich, CH\",2\n1,Sydney,1\n"},
	} {
		args := append([]string{"run", "--obs", obs, "--ref", ref, "--obs-id", "name", "--ref-id", "code", "--engine", "cpu", "-q", "--out", "-"}, tc.args...)
		status, stdout, stderr := mainFor(args...)
		if status != 0 || !strings.HasPrefix(stdout, tc.want) {
			t.Errorf("%v: exit %d, %q, want it to start %q (%s)", tc.args, status, stdout, tc.want, stderr)
		}
	}
	pq := filepath.Join(dir, "a.parquet")
	if status, _, stderr := mainFor("run", "--obs", obs, "--ref", ref, "--ref-id", "code", "--engine", "cpu", "-q", "--out", pq); status != 0 {
		t.Fatalf("parquet: %s", stderr)
	}
	if b, _ := os.ReadFile(pq); !bytes.Contains(b, []byte("ref_id")) || !bytes.Contains(b, []byte("SYD")) {
		t.Error("the Parquet answers lack ref_id")
	}
	npz := filepath.Join(dir, "a.npz")
	if status, _, stderr := mainFor("run", "--obs", obs, "--ref", ref, "--obs-id", "name", "--ref-id", "code", "--engine", "cpu", "-q", "--out", npz); status != 0 {
		t.Fatalf("npz: %s", stderr)
	}
	if b, _ := os.ReadFile(npz); !bytes.Contains(b, []byte("obs_id.npy")) || !bytes.Contains(b, []byte("'descr': '<U10'")) {
		t.Error("the npz answers lack obs_id as unicode")
	}
	for _, args := range [][]string{
		{"run", "--obs", "100", "--ref", ref, "--obs-id", "name"},
	} {
		if status, _, _ := mainFor(args...); status != 2 {
			t.Errorf("%v: exit %d, want 2", args, status)
		}
	}
}

// Standard input takes every format (Parquet through a temporary file),
// and --out-format writes Parquet to standard output.
func TestStdinFormats(t *testing.T) {
	dir := t.TempDir()
	obs := write(t, dir, "obs.csv", "lat,lon\n47.37,8.54\n-33.87,151.21\n")
	ref := write(t, dir, "ref.csv", "lat,lon\n47.46,8.55\n-33.95,151.18\n")
	pq := filepath.Join(dir, "obs.parquet")
	if status, _, stderr := mainFor("convert", obs, pq); status != 0 {
		t.Fatal(stderr)
	}
	_, want, _ := mainFor("run", "--obs", obs, "--ref", ref, "--engine", "cpu", "-q", "--out", "-")
	body, _ := os.ReadFile(pq)
	withStdin(t, body)
	status, got, stderr := mainFor("run", "--obs", "-", "--ref", ref, "--engine", "cpu", "-q", "--out", "-")
	if status != 0 || got != want {
		t.Errorf("Parquet on standard input: exit %d, %q, want %q (%s)", status, got, want, stderr)
	}
	status, got, _ = mainFor("run", "--obs", obs, "--ref", ref, "--engine", "cpu", "-q", "--out", "-", "--out-format", "parquet")
	if status != 0 || !strings.HasPrefix(got, "PAR1") {
		t.Errorf("--out - --out-format parquet: exit %d, %q", status, got[:min(8, len(got))])
	}
}

// withStdin makes standard input, for the rest of the test, a pipe that
// holds body.
func withStdin(t *testing.T, body []byte) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = stdin; r.Close() })
	go func() {
		w.Write(body)
		w.Close()
	}()
}

// --cpu-profile writes a pprof profile, only for a run that
// succeeded, and never onto --out.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "run.prof")
	if _, stderr, err := runKnn(t, "run", "--engine", "cpu", "-q", "--obs", "2^16", "--ref", "2^8", "--cpu-profile", prof); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // pprof's profiles are gzipped protocol buffers
		t.Errorf("the profile is not a pprof profile: % x", b[:min(len(b), 8)])
	}
	bad := filepath.Join(dir, "bad.prof")
	if _, _, err := runKnn(t, "run", "--engine", "cpu", "-q", "--obs", "2^16", "--ref", "2^8", "--k", "1000", "--cpu-profile", bad); err == nil {
		t.Errorf("--k above the references passed")
	}
	if _, err := os.Stat(bad); err == nil {
		t.Errorf("a failed run left its profile")
	}
	if _, _, err := runKnn(t, "run", "--obs", "2^8", "--ref", "2^8", "--out", prof, "--cpu-profile", prof); err == nil {
		t.Errorf("--cpu-profile onto --out passed")
	}
	if _, _, err := runKnn(t, "run", "--mpi", "--obs", "2^8", "--ref", "2^8", "--cpu-profile", bad); err == nil {
		t.Errorf("--cpu-profile with --mpi passed")
	}
	if _, _, err := runKnn(t, "run", "--obs", "2^8", "--ref", "2^8", "--cpu-profile", "-"); err == nil {
		t.Errorf("--cpu-profile - passed")
	}
}

// Without --out, a file's answers go to standard output where that is a
// pipe (a buffer here), as a filter's do; a count's are not written, and
// the summary says how to keep them.
func TestRunWithoutOut(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "in.csv", "lat,lon\n1,2\n3,4\n")
	status, out, errOut := mainFor("run", "--obs", in, "--ref", in, "--engine", "cpu")
	if status != 0 || out != "obs_index,ref_index,distance_m\n0,0,0.000\n1,1,0.000\n" {
		t.Errorf("file, no --out: %d %q %q", status, out, errOut)
	}
	status, out, errOut = mainFor("run", "--obs", "2^6", "--ref", "2^3", "--engine", "cpu")
	if status != 0 || out != "" || !strings.Contains(errOut, "answers:      not written: --out FILE writes them") {
		t.Errorf("count, no --out: %d %q %q", status, out, errOut)
	}
}

// knn convert keeps the columns beside the coordinates, so that an id
// named in the CSV is found in the Parquet, Arrow and CSV it converts to;
// NumPy, which holds numbers only, gets the points and a note.
func TestConvertKeepsColumns(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "airports.csv", "lat,lon,iata,name,elev\n49.0097,2.5479,CDG,\"Paris, Charles de Gaulle\",119\n51.47,-0.4543,LHR,Heathrow,25\n")
	obs := write(t, dir, "obs.csv", "lat,lon\n48.8566,2.3522\n")
	for _, ext := range []string{".parquet", ".arrow", ".csv"} {
		out := filepath.Join(dir, "out"+ext)
		if status, _, errOut := mainFor("convert", in, out); status != 0 || !strings.Contains(errOut, "columns lat, lon, iata, name, elev") {
			t.Fatalf("convert to %s: %d %q", ext, status, errOut)
		}
		status, got, errOut := mainFor("run", "--obs", obs, "--ref", out, "--ref-id", "iata", "--engine", "cpu", "--out", "-")
		if status != 0 || !strings.HasPrefix(got, "obs_index,ref_index,ref_id,distance_m\n0,0,CDG,") {
			t.Errorf("--ref-id iata from %s: %d %q %q", ext, status, got, errOut)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.csv")); string(b) != "lat,lon,iata,name,elev\n49.0097,2.5479,CDG,\"Paris, Charles de Gaulle\",119\n51.47,-0.4543,LHR,Heathrow,25\n" {
		t.Errorf("CSV to CSV: %q", b)
	}
	status, _, errOut := mainFor("convert", in, filepath.Join(dir, "out.npy"))
	if status != 0 || !strings.Contains(errOut, "left out the columns iata, name, elev") {
		t.Errorf("to .npy: %d %q", status, errOut)
	}
	status, _, errOut = mainFor("convert", "--coords-only", in, filepath.Join(dir, "plain.csv"))
	if b, _ := os.ReadFile(filepath.Join(dir, "plain.csv")); status != 0 || !strings.HasPrefix(string(b), "lat,lon\n49.0097,2.5479\n") {
		t.Errorf("--coords-only: %d %q %q", status, errOut, b)
	}
}

// knn version and the Python wheel carry one version number.
func TestVersionMatchesWheel(t *testing.T) {
	for _, f := range []struct{ path, prefix string }{
		{"../../python/pyproject.toml", `version = "`},
		{"../../python/geoknn/__init__.py", `__version__ = "`},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\n"+f.prefix+moduleVersion+"\"\n") {
			t.Errorf("%s does not say %s%s\": keep it and moduleVersion (cmd/knn/version.go) equal", f.path, f.prefix, moduleVersion)
		}
	}
}

// The summary says what was searched, on what, where the answers went and
// how long it took, without the engine's internals; -v gives those (and
// the stages), -q nothing at all on success.
func TestRunSummary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "n.csv")
	args := []string{"run", "--obs", sampleAirports, "--ref", sampleAirports, "--engine", "cpu", "--k", "2", "--out", out, "--validate", "50"}
	status, _, errOut := mainFor(args...)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	want := []string{"searched:     the 2 nearest of 1027 references (", "on:           the CPU, ", "validated:    ", "answers:      " + out + " (csv", "took:         "}
	if status != 0 || len(lines) != len(want) {
		t.Fatalf("summary: %d %q", status, errOut)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want %q...", i, lines[i], w)
		}
	}
	if status, _, errOut := mainFor(append(args, "-q")...); status != 0 || errOut != "" {
		t.Errorf("-q: %d %q", status, errOut)
	}
	if status, _, errOut := mainFor(append(args, "-v")...); status != 0 || !strings.Contains(errOut, "engine:       cpu (") || !strings.Contains(errOut, "stages (summed") {
		t.Errorf("-v: %d %q", status, errOut)
	}
}

// --within-m --list --keep-unmatched gives every observation with no
// reference in range one row "i,-1," and leaves the others' rows as they
// were, streamed (a file) or answered whole (counts).
func TestKeepUnmatched(t *testing.T) {
	for _, obs := range []string{sampleCities, "2^10"} {
		base := []string{"run", "-q", "--engine", "cpu", "--obs", obs, "--ref", sampleAirports, "--within-m", "50000", "--out", "-"}
		_, counts, _ := mainFor(base...)
		_, lists, _ := mainFor(append(base, "--list")...)
		status, kept, stderr := mainFor(append(base, "--list", "--keep-unmatched")...)
		if status != 0 {
			t.Fatalf("%s: %d %q", obs, status, stderr)
		}
		var want strings.Builder
		listed := strings.Split(strings.TrimSuffix(lists, "\n"), "\n")
		want.WriteString(listed[0] + "\n")
		next := 1
		for _, line := range strings.Split(strings.TrimSuffix(counts, "\n"), "\n")[1:] {
			i, n, _ := strings.Cut(line, ",")
			if n == "0" {
				want.WriteString(i + ",-1,\n")
				continue
			}
			for next < len(listed) && strings.HasPrefix(listed[next], i+",") {
				want.WriteString(listed[next] + "\n")
				next++
			}
		}
		if kept != want.String() || !strings.Contains(kept, ",-1,\n") {
			t.Errorf("%s: --keep-unmatched differs from the lists and the counts", obs)
		}
	}
	if status, _, stderr := mainFor("run", "--obs", "2^4", "--ref", "2^4", "--within-m", "5", "--keep-unmatched"); status != 2 || !strings.Contains(stderr, "give both") {
		t.Errorf("without --list: %d %q", status, stderr)
	}
}
