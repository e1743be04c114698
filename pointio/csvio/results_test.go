package csvio

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestWriteResults(t *testing.T) {
	rows := []struct {
		ref uint32
		m   float64
	}{
		{17, 1523.25},
		{3, 0},
		{math.MaxUint32, 20015086.796020572}, // half the equator of the mean sphere
		{0, 0.0004999},
		{1, 0.0005},  // the double just above 0.0005: rounds up
		{2, 2.0025},  // the double just below 2.0025: rounds down
		{4, 1e-300},  // tiny
		{5, 1e15},    // beyond the fast path
		{6, 123.456}, //
		{7, math.Copysign(0, -1)},
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	err := WriteResults(w, len(rows), func(i int) (uint32, float64) { return rows[i].ref, rows[i].m })
	if err != nil {
		t.Fatal(err)
	}
	want := "obs_index,ref_index,distance_m\n" +
		"0,17,1523.250\n" +
		"1,3,0.000\n" +
		"2,4294967295,20015086.796\n" +
		"3,0,0.000\n" +
		"4,1,0.001\n" +
		"5,2,2.002\n" +
		"6,4,0.000\n" +
		"7,5,1000000000000000.000\n" +
		"8,6,123.456\n" +
		"9,7,0.000\n"
	if got := buf.String(); got != want {
		t.Errorf("WriteResults wrote\n%s\nwant\n%s", got, want)
	}

	// No rows: the header only.
	buf.Reset()
	if err := WriteResults(w, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != ResultsHeader+"\n" {
		t.Errorf("WriteResults with no rows wrote %q", got)
	}
}

func TestWriteResultsErrors(t *testing.T) {
	for _, m := range []float64{-1, -1e-9, math.NaN(), math.Inf(1), math.Inf(-1)} {
		w := bufio.NewWriter(&bytes.Buffer{})
		err := WriteResults(w, 3, func(i int) (uint32, float64) {
			if i == 2 {
				return 0, m
			}
			return 0, 1
		})
		if err == nil || !strings.Contains(err.Error(), "observation 2") {
			t.Errorf("distance %v: error = %v, want one naming observation 2", m, err)
		}
	}

	if err := WriteResults(bufio.NewWriter(&bytes.Buffer{}), -1, nil); err == nil {
		t.Error("negative row count: no error")
	}

	// A failing writer is reported.
	fail := errors.New("disk full")
	w := bufio.NewWriterSize(failWriter{fail}, 16)
	if err := WriteResults(w, 100, func(int) (uint32, float64) { return 1, 1 }); !errors.Is(err, fail) {
		t.Errorf("failing writer: error = %v, want %v", err, fail)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestAppendMetresMatchesStrconv checks the fast formatting against
// strconv on random, boundary and tie values.
func TestAppendMetresMatchesStrconv(t *testing.T) {
	check := func(m float64) {
		t.Helper()
		got := string(appendMetres(nil, m))
		want := strconv.FormatFloat(m, 'f', 3, 64)
		if got != want {
			t.Fatalf("appendMetres(%v) = %s, strconv gives %s", m, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := 200_000
	if testing.Short() {
		n = 10_000
	}
	for range n {
		check(r.Float64() * 2.1e7)                                 // any distance on Earth
		check(r.Float64() * 10)                                    // short distances
		check(math.Ldexp(r.Float64(), r.IntN(120)-60))             // all magnitudes
		check(float64(r.IntN(2e10)) / 1000)                        // exact millimetres
		check((float64(r.IntN(2e10)) + 0.5) / 1000)                // ties in decimal
		check(math.Nextafter((float64(r.IntN(2e10))+0.5)/1000, 0)) // just below ties
	}
	for _, m := range []float64{
		5e-324, 1e-10, 0.0005, 0.0015, 0.0025, 1.0005, 999.9995, 999999.9995,
		9.999999999995e11, 1e12, math.Nextafter(1e12, 0), 1.5e12, 1e20, math.MaxFloat64,
		20015086.796020572, 4503599627370495.5, 9007199254740993,
	} {
		check(m)
		check(math.Nextafter(m, 0))
		check(math.Nextafter(m, math.Inf(1)))
	}
}
