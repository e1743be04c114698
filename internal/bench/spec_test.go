package bench

import (
	"reflect"
	"strings"
	"testing"

	"github.com/geoknn/geoknn"
)

func pow2s(from, to, step int) []int {
	var out []int
	for k := from; k <= to; k += step {
		out = append(out, 1<<k)
	}
	return out
}

func TestParseSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"2^20", []int{1 << 20}},
		{"2^20:2^27", pow2s(20, 27, 1)},
		{"2^20:2^27:x4", pow2s(20, 26, 2)},
		{"2^20:2^27:*2", pow2s(20, 27, 1)},
		{"1000:4000:+1000", []int{1000, 2000, 3000, 4000}},
		{"1000:3500:+1000", []int{1000, 2000, 3000}},
		{"2^12,2^10, 5e4", []int{1 << 10, 1 << 12, 50000}},
		{"2^10:2^12,2^11:2^13", pow2s(10, 13, 1)}, // merged, no repeats
		{"7:7", []int{7}},
		{"3:100:x3", []int{3, 9, 27, 81}},
	} {
		got, err := ParseSizes(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"0", "at least 1"},
		{"2^20:2^10", "backwards"},
		{"2^10:2^20:x1", "bad step"},
		{"2^10:2^20:+0", "bad step"},
		{"2^10:2^20:y2", "bad step"},
		{"2^10:2^20:", "empty step"},
		{"1:2:3:4", "bad range"},
		{"1:2^30:+1", "more than"},
		{"abc", "bad count"},
		{"2^10,", "bad count"},
	} {
		_, err := ParseSizes(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSizes(%q) error %v, want one mentioning %q", tc.in, err, tc.want)
		}
	}
}

func TestParseGPUs(t *testing.T) {
	for _, tc := range []struct {
		in        string
		available int
		want      []int
	}{
		{"1,2", 8, []int{1, 2}},
		{"all", 8, []int{8}},
		{"ALL", 2, []int{2}},
		{"1:all", 4, []int{1, 2, 3, 4}},
		{"1:8:x2", 8, []int{1, 2, 4, 8}},
		{"1,all", 2, []int{1, 2}},
		{"4", 2, []int{4}}, // kept: the sweep skips it with a note
		{"all", 0, nil},
		{"1:all", 0, nil},
		{"1,2", 0, []int{1, 2}},
	} {
		got, err := ParseGPUs(tc.in, tc.available)
		if err != nil || len(got)+len(tc.want) > 0 && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseGPUs(%q, %d) = %v, %v; want %v", tc.in, tc.available, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "two", "2^1", "3:1", "1:4:x1"} {
		if _, err := ParseGPUs(in, 4); err == nil {
			t.Errorf("ParseGPUs(%q): no error", in)
		}
	}
}

func TestParseNames(t *testing.T) {
	if got, err := ParseEngines("cpu, GPU,cpu"); err != nil || !reflect.DeepEqual(got, []string{"cpu", "gpu"}) {
		t.Errorf("ParseEngines = %v, %v", got, err)
	}
	if _, err := ParseEngines("tpu"); err == nil || !strings.Contains(err.Error(), `"tpu"`) {
		t.Errorf("ParseEngines(tpu) error %v", err)
	}
	algos, err := ParseAlgorithms("seed,brute")
	if err != nil || !reflect.DeepEqual(algos, []geoknn.Algorithm{geoknn.Seed, geoknn.Brute}) {
		t.Errorf("ParseAlgorithms = %v, %v", algos, err)
	}
	// An unknown algorithm is the engine's own clear error.
	_, err = ParseAlgorithms("brute,quantum")
	if err == nil || !strings.Contains(err.Error(), `unknown algorithm "quantum"`) {
		t.Errorf("ParseAlgorithms(quantum) error %v", err)
	}
	// "all" is every candidate the engine knows, seed and brute at least.
	all, err := ParseAlgorithms("all")
	if err != nil || len(all) < 2 || all[0] != geoknn.Seed || all[1] != geoknn.Brute {
		t.Errorf("ParseAlgorithms(all) = %v, %v", all, err)
	}
	for _, a := range all {
		if _, err := geoknn.ParseAlgorithm(a.String()); err != nil {
			t.Errorf("all holds %v, which the engine does not parse", a)
		}
	}
	gens, err := ParseGenerators("seed,sphere,clustered,cities,sphere")
	if err != nil || !reflect.DeepEqual(gens, []string{"seed", "sphere", "clustered", "cities"}) {
		t.Errorf("ParseGenerators = %v, %v", gens, err)
	}
	if _, err := ParseGenerators("gauss"); err == nil || !strings.Contains(err.Error(), "cities") {
		t.Errorf("ParseGenerators(gauss) error %v", err)
	}
}

func TestSizePairs(t *testing.T) {
	got := sizePairs([]Shape{{Obs: []int{1, 2}, Ref: []int{8}}, {Obs: []int{2}, Ref: []int{4, 8}}})
	want := [][2]int{{1, 8}, {2, 8}, {2, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sizePairs = %v, want %v", got, want)
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int]string{1 << 27: "2^27", 1 << 10: "2^10", 512: "512", 135233: "135,233", 1000000: "1,000,000", 7: "7"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}
