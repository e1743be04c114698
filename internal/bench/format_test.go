package bench

import (
	"strings"
	"testing"
)

func TestFormatSeconds(t *testing.T) {
	for v, want := range map[float64]string{
		2.084: "2.08 s", 20.17: "20.2 s", 123.4: "123 s", 0.1844: "184 ms", 8.12e-5: "81.2 µs", 5e-9: "5.00 ns", 0: "", -1: "",
		0.999: "999 ms", 1: "1.00 s",
	} {
		if got := FormatSeconds(v); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	for v, want := range map[float64]string{4.22e12: "4.22 T", 5.73e7: "57.3 M", 999: "999", 1.5e3: "1.50 k", 0: "", 2e15: "2.00 P"} {
		if got := FormatRate(v); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestSecondsLabel(t *testing.T) {
	for _, tc := range []struct {
		m, e int
		want string
	}{{1, 0, "1 s"}, {1, 1, "10 s"}, {1, -1, "100 ms"}, {1, -3, "1 ms"}, {2, -4, "200 µs"}, {5, -7, "500 ns"}, {1, 2, "100 s"}} {
		if got := secondsLabel(tc.m, tc.e); got != tc.want {
			t.Errorf("secondsLabel(%d, %d) = %q, want %q", tc.m, tc.e, got, tc.want)
		}
	}
}

// A report built by hand: one row of each kind, checked cell by cell.
func TestTable(t *testing.T) {
	ok := &Validation{Checked: 1024}
	approx := &Validation{Checked: 1024, DistanceWrong: 3, MaxExcessM: 0.5, MaxDistanceErrorM: new(2.75)}
	r := &Report{
		Env: Env{Devices: []Device{{Name: "NVIDIA H200", Multiprocessors: 132, ClockMHz: 1980,
			FP32PeakFLOPS: 2 * 128 * 132 * 1980e6, MemoryBandwidth: 4.917e12}}},
		Cases: []Case{
			{Engine: "gpu", GPUs: 1, Algorithm: "seed", Generator: "seed", Obs: 1 << 27, Ref: 1 << 16, MeasuredObs: 1 << 24, Scale: 8,
				Wall: []float64{2.55, 2.5, 2.6}, Kernel: []float64{2.52, 2.49, 2.5}, Verdict: VerdictApprox, Validation: approx},
			{Engine: "gpu", GPUs: 1, Algorithm: "brute", Generator: "seed", Obs: 1 << 27, Ref: 1 << 16, MeasuredObs: 1 << 27,
				Wall: []float64{2.37, 2.21, 2.26}, Kernel: []float64{2.084, 2.083, 2.09}, Verdict: VerdictOK, Validation: ok},
			{Engine: "gpu", GPUs: 1, Algorithm: "grid", Generator: "seed", Obs: 1 << 27, Ref: 1 << 16, MeasuredObs: 1 << 27,
				Wall: []float64{0.5}, Kernel: []float64{0.004}, Verdict: VerdictOK, Validation: ok},
			{Engine: "cpu", Algorithm: "brute", Generator: "seed", Obs: 1 << 20, Ref: 1 << 16, MeasuredObs: 1 << 20,
				Wall: []float64{6.55}, Verdict: VerdictFail, Validation: &Validation{Checked: 1024, IndexWrong: 7}},
		},
	}
	for i := range r.Cases {
		r.Cases[i].Pairs = float64(r.Cases[i].Obs) * float64(r.Cases[i].Ref)
	}
	r.Derive()
	rows := strings.Split(strings.TrimSpace(r.Table()), "\n")
	if len(rows) != 6 {
		t.Fatalf("%d lines:\n%s", len(rows), r.Table())
	}
	want := []string{
		"| 1 | gpu | 1 | seed | seed | 2^27 | 2^16 | ~20.0 s | ~20.4 s | ~20.0 s | ~20.8 s | ~431 G | ~6.58 M | 1x |  | approx (3 of 1024 beyond 1 m, max 2.75 m) |",
		"| 2 | gpu | 1 | brute | seed | 2^27 | 2^16 | 2.08 s | 2.26 s | 2.21 s | 2.37 s | 3.89 T | 59.4 M | ~9.03x | 88% FP32 | ok (1024) |",
		"| 3 | gpu | 1 | grid | seed | 2^27 | 2^16 | 4.00 ms | 500 ms | 500 ms | 500 ms | 17.6 T | 268 M | ~40.8x | 805 GB/s (16.4%) | ok (1024) |",
		"| 4 | cpu | — | brute | seed | 2^20 | 2^16 | — | — | — | — | — | — |  |  | **FAIL** (7 of 1024 wrong) |",
	}
	for i, w := range want {
		if rows[i+2] != w {
			t.Errorf("row %d:\n got %s\nwant %s", i+1, rows[i+2], w)
		}
	}
	if r.Cases[1].SpeedupKernel < 9.59 || r.Cases[1].SpeedupKernel > 9.61 {
		t.Errorf("kernel speed-up %v", r.Cases[1].SpeedupKernel)
	}
}
