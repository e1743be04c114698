package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// launcher is an MPI launcher on this machine and its library.
type launcher struct {
	name, lib string
	args      []string
}

// launchers lists the MPI installations found (Open MPI, MPICH).
func launchers(t *testing.T) []launcher {
	var found []launcher
	if p, err := exec.LookPath("mpirun.openmpi"); err == nil {
		found = append(found, launcher{p, "libmpi.so.40", []string{"--oversubscribe", "--allow-run-as-root"}})
	} else if p, err := exec.LookPath("mpirun"); err == nil {
		found = append(found, launcher{p, "", []string{"--oversubscribe", "--allow-run-as-root"}})
	}
	if p, err := exec.LookPath("mpirun.mpich"); err == nil {
		found = append(found, launcher{p, "libmpich.so.12", nil})
	}
	if len(found) == 0 {
		t.Skip("no MPI launcher (mpirun): .ci/run installs Open MPI and MPICH")
	}
	return found
}

// run runs knn under the launcher with np ranks and returns its exit
// error and standard error.
func (l launcher) run(t *testing.T, bin string, np int, args ...string) (string, error) {
	t.Helper()
	_, stderr, err := l.output(t, bin, np, args...)
	return stderr, err
}

// output is run with standard output too.
func (l launcher) output(t *testing.T, bin string, np int, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append(append(append([]string{}, l.args...), "-np", strconv.Itoa(np)), bin)
	cmd := exec.CommandContext(ctx, l.name, append(full, args...)...)
	cmd.Env = os.Environ()
	if l.lib != "" {
		cmd.Env = append(cmd.Env, "GEOKNN_MPI_LIB="+l.lib)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s -np %d: no exit within 2 minutes", l.name, np)
	}
	return stdout.String(), stderr.String(), err
}

// 1, 2 and 3 ranks write, byte for byte, what one process writes: counts
// (generated on every rank), files (loaded by rank 0 and scattered),
// host-generated points, k nearest, counts and lists within a radius, in
// every output format (CSV, npz and Parquet written by every rank at its
// offsets; Arrow and outputs with ids gathered); under Open MPI and MPICH
// (two ranks, the cases marked both). Past 2^21 observations the Parquet
// row groups fall to several ranks.
func TestRunMPI(t *testing.T) {
	ls := launchers(t)
	bin := knnBinary(t)
	dir := t.TempDir()
	data := filepath.Join("..", "..", "testdata", "realdata")
	airports := filepath.Join(data, "airports.csv")
	// Files every rank reads its own rows of.
	cities, citiesPQ := filepath.Join(dir, "cities.npy"), filepath.Join(dir, "cities.parquet")
	for _, to := range []string{cities, citiesPQ} {
		if out, err := exec.Command(bin, "convert", filepath.Join(data, "cities.csv"), to).CombinedOutput(); err != nil {
			t.Fatalf("knn convert: %v\n%s", err, out)
		}
	}
	cases := mpiRunCases(data, cities, citiesPQ, airports)
	for _, tc := range cases {
		want := filepath.Join(dir, "single-"+tc.name+"."+tc.ext)
		args := append([]string{"run", "--engine", "cpu", "-q", "--out", want}, tc.args...)
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		wantBytes, _ := os.ReadFile(want)
		for li, l := range ls {
			for np := 1; np <= 3; np++ {
				if li > 0 && (np != 2 || !tc.both) {
					continue // MPICH: two ranks, some cases
				}
				got := filepath.Join(dir, "mpi-"+tc.name+"."+tc.ext)
				stderr, err := l.run(t, bin, np, append([]string{"run", "--mpi", "--engine", "cpu", "-q", "--out", got}, tc.args...)...)
				if err != nil {
					t.Fatalf("%s, %s -np %d: %v\n%s", tc.name, filepath.Base(l.name), np, err, stderr)
				}
				if slices.Contains(tc.args, "--validate") && !strings.Contains(stderr, "validate:     ") {
					t.Errorf("%s, %s -np %d: no verdict of --validate:\n%s", tc.name, filepath.Base(l.name), np, stderr)
				}
				gotBytes, _ := os.ReadFile(got)
				if !bytes.Equal(gotBytes, wantBytes) {
					t.Errorf("%s, %s -np %d: output differs from one process's", tc.name, filepath.Base(l.name), np)
				}
				os.Remove(got)
			}
		}
	}
}

// --out-per-rank: each rank's file holds its rows, obs_index as in the
// whole set; together they are one process's answers.
func TestRunMPIOutPerRank(t *testing.T) {
	l := launchers(t)[0]
	bin := knnBinary(t)
	data := filepath.Join("..", "..", "testdata", "realdata")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"counts", []string{"--obs", "40000", "--ref", "300"}},
		{"ids, k nearest", []string{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv"),
			"--obs-id", "name", "--ref-id", "iata", "--k", "2"}},
		{"reference ids, radius lists", []string{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv"),
			"--ref-id", "iata", "--within-m", "40000", "--list"}},
	} {
		dir := t.TempDir()
		want := filepath.Join(dir, "one.csv")
		if out, err := exec.Command(bin, append([]string{"run", "--engine", "cpu", "-q", "--out", want}, tc.args...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		args := append([]string{"run", "--mpi", "--out-per-rank", "--engine", "cpu", "-q", "--out", filepath.Join(dir, "part.csv")}, tc.args...)
		if stderr, err := l.run(t, bin, 3, args...); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, stderr)
		}
		wantBytes, _ := os.ReadFile(want)
		var got []byte
		for r := range 3 {
			b, err := os.ReadFile(filepath.Join(dir, "part.rank"+strconv.Itoa(r)+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			if r > 0 {
				b = b[bytes.IndexByte(b, '\n')+1:] // the header once
			}
			got = append(got, b...)
		}
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("%s: the ranks' files together differ from one process's answers", tc.name)
		}
	}
}

// A bad file on rank 0 ends every rank within seconds, non-zero, with the
// file named and no output.
func TestRunMPIFailure(t *testing.T) {
	l := launchers(t)[0]
	bin := knnBinary(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("lat,lon\n10,20\n95,30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A .npy whose bad row lies in the last rank's share: that rank, reading
	// its own rows, finds it.
	rows := make([]float64, 2*900)
	for i := range 900 {
		rows[2*i], rows[2*i+1] = float64(i%170)-85, float64(i%350)-175
	}
	rows[2*800] = 95
	badNPY := filepath.Join(dir, "bad.npy")
	if err := os.WriteFile(badNPY, npyFile(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join("..", "..", "testdata", "realdata", "airports.csv")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--obs", "2^12", "--ref", bad}, "bad.csv"},
		{[]string{"--obs", badNPY, "--ref", ref}, "bad.npy: row 801"},
	} {
		out := filepath.Join(dir, "out.csv")
		start := time.Now()
		stderr, err := l.run(t, bin, 3, append([]string{"run", "--mpi", "--engine", "cpu", "-q", "--out", out}, tc.args...)...)
		if err == nil {
			t.Fatalf("exit status 0 with a bad file\n%s", stderr)
		}
		if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "95") {
			t.Errorf("the error does not name the file, row and value (%q):\n%s", tc.want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("output written by a failed job")
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("the job took %v to end", d)
		}
	}
}

// npyFile is a little-endian float64 (N, 2) .npy of rows (lat, lon pairs).
func npyFile(rows []float64) []byte {
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 2), }", len(rows)/2)
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	b = append(b, header...)
	for _, v := range rows {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// mpiRunCase is a TestRunMPI case: knn run's flags, --out's extension,
// and whether MPICH runs it too.
type mpiRunCase struct {
	name string
	args []string
	ext  string
	both bool
}

// mpiRunCases are TestRunMPI's cases over the real data and its .npy and
// Parquet copies.
func mpiRunCases(data, cities, citiesPQ, airports string) []mpiRunCase {
	return []mpiRunCase{
		{"counts", []string{"--obs", "50001", "--ref", "2^10"}, "csv", true},
		{"files", []string{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv")}, "npz", true},
		{"row groups on every rank", []string{"--obs", "2200000", "--ref", "2^8"}, "parquet", true},
		{"k nearest, row groups on two ranks", []string{"--obs", "1100000", "--ref", "2^8", "--k", "2", "--max-m", "800000"}, "parquet", false},
		{"radius lists, row groups on two ranks", []string{"--obs", "1100000", "--ref", "2^8", "--within-m", "300000", "--list"}, "parquet", false},
		{"files to Parquet", []string{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv")}, "parquet", false},
		{"ids", []string{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv"),
			"--obs-id", "name", "--ref-id", "iata", "--k", "2"}, "csv", false},
		{"reference ids, radius lists, Parquet", []string{"--obs", filepath.Join(data, "cities.csv"), "--ref", filepath.Join(data, "airports.csv"),
			"--ref-id", "iata", "--within-m", "40000", "--list"}, "parquet", false},
		{"clustered on the host", []string{"--obs", "30000", "--ref", "500", "--gen", "clustered"}, "arrow", false},
		{"k nearest", []string{"--obs", "20001", "--ref", "700", "--k", "3"}, "csv", false},
		{"k nearest within a limit", []string{"--obs", "20001", "--ref", "700", "--k", "4", "--max-m", "300000"}, "npz", false},
		{"counts within a radius", []string{"--obs", "20001", "--ref", "700", "--within-m", "400000"}, "csv", false},
		{"lists within a radius", []string{"--obs", "20001", "--ref", "700", "--within-m", "300000", "--list"}, "parquet", false},
		{"lists within a radius, npz", []string{"--obs", "20001", "--ref", "700", "--within-m", "300000", "--list"}, "npz", true},
		{"rows of a .npy file", []string{"--obs", cities, "--ref", airports}, "csv", false},
		{"validated by every rank", []string{"--obs", cities, "--ref", airports, "--validate", "500", "--k", "2"}, "npz", true},
		{"radius counts validated by every rank", []string{"--obs", "20001", "--ref", "700", "--within-m", "400000", "--validate", "300"}, "parquet", false},
		{"rows of a .npy file, 3 nearest", []string{"--obs", cities, "--ref", airports, "--k", "3"}, "npz", false},
		{"rows of a Parquet file", []string{"--obs", citiesPQ, "--ref", airports, "--within-m", "200000", "--list"}, "csv", false},
		{"nearest other airport", []string{"--obs", airports, "--ref", airports, "--exclude-self"}, "csv", false},
		{"3 nearest other airports", []string{"--obs", airports, "--ref", airports, "--exclude-self", "--k", "3"}, "npz", false},
		{"other airports within 100 km", []string{"--obs", airports, "--ref", airports, "--exclude-self", "--within-m", "100000", "--list"}, "parquet", false},
	}
}
