package main

import (
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/bench"
)

// A tiny CPU sweep through the command: the table on stdout, the JSON and
// the PNG on disk.
func TestBenchCPU(t *testing.T) {
	dir := t.TempDir()
	js, img := filepath.Join(dir, "b.json"), filepath.Join(dir, "b.png")
	stdout, stderr, err := runKnn(t, "bench", "--engine", "cpu,gpu", "--algo", "brute", "--obs", "2^10", "--ref", "2^8",
		"--repeat", "1", "--warmup", "0", "--validate", "128", "--json", js, "--plot", img)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"| 1 | cpu | — | brute | sphere | 2^10 | 256 |", "ok (128)", "Legend:", "knn bench --engine cpu,gpu"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := bench.ReadJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 || rep.Cases[0].Verdict != bench.VerdictOK || len(rep.Cases[0].Wall) != 1 {
		t.Errorf("cases %+v", rep.Cases)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Error(err)
	}

	// --from-json re-renders the same table without running anything.
	again, stderr, err := runKnn(t, "bench", "--from-json", js, "--plot", filepath.Join(dir, "again.png"))
	if err != nil {
		t.Fatalf("--from-json: %v\n%s", err, stderr)
	}
	if again != stdout {
		t.Errorf("--from-json table differs:\n%s\nwant:\n%s", again, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "again.png")); err != nil {
		t.Error(err)
	}
	if _, _, err := runKnn(t, "bench", "--from-json", filepath.Join(dir, "missing.json")); err == nil {
		t.Error("--from-json accepted a missing file")
	}
}

func TestBenchConfig(t *testing.T) {
	f := benchFlags{obs: multiFlag{"2^20:2^27", "2^24"}, ref: multiFlag{"2^16", "2^10:2^18:x4"}, engines: "gpu",
		algos: "seed,brute", gpus: "1,2", gens: "seed,cities", seedMax: "2^40", memory: "device", repeat: 3, seedScale: true}
	cfg, err := benchConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []bench.Shape{
		{Obs: []int{1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25, 1 << 26, 1 << 27}, Ref: []int{1 << 16}},
		{Obs: []int{1 << 24}, Ref: []int{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18}},
	}
	if !reflect.DeepEqual(cfg.Shapes, want) || cfg.SeedMaxPairs != 1<<40 || cfg.GPUs != "1,2" || len(cfg.Algorithms) != 2 {
		t.Errorf("config %+v", cfg)
	}
	// One --ref pairs with every --obs.
	f.ref = multiFlag{"2^16"}
	if cfg, err := benchConfig(f); err != nil || len(cfg.Shapes) != 2 || cfg.Shapes[1].Ref[0] != 1<<16 {
		t.Errorf("broadcast --ref: %+v, %v", cfg.Shapes, err)
	}

	for _, tc := range []struct {
		mod  func(*benchFlags)
		want string
	}{
		{func(f *benchFlags) { f.algos = "brute,quantum" }, `unknown algorithm "quantum"`},
		{func(f *benchFlags) { f.engines = "tpu" }, `unknown engine "tpu"`},
		{func(f *benchFlags) { f.gpus = "0" }, "--gpus"},
		{func(f *benchFlags) { f.gens = "gauss" }, `"gauss"`},
		{func(f *benchFlags) { f.obs = multiFlag{"2^20:2^10"} }, "--obs 2^20:2^10"},
		{func(f *benchFlags) { f.obs, f.ref = multiFlag{"1", "2", "3"}, multiFlag{"1", "2"} }, "same number of times"},
		{func(f *benchFlags) { f.seedMax = "lots" }, "--seed-max-pairs"},
		{func(f *benchFlags) { f.repeat = 0 }, "--repeat"},
		{func(f *benchFlags) { f.memory = "disk" }, "--memory"},
	} {
		g := f
		tc.mod(&g)
		if _, err := benchConfig(g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one mentioning %s", err, tc.want)
		}
	}
}

func TestBenchFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--gen", "cities", "--cities", filepath.Join(t.TempDir(), "none.csv"), "--engine", "cpu"}, "none.csv"},
		{[]string{"bench", "--algo", "nope"}, `unknown algorithm "nope"`},
		{[]string{"bench", "extra"}, "unexpected argument"},
	} {
		if _, _, err := runKnn(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one mentioning %s", tc.args, err, tc.want)
		}
	}
	if stdout, _, err := runKnn(t, "bench", "--help"); err != nil || !strings.Contains(stdout, "2^20:2^27:x4") || !strings.Contains(stdout, "-quick") {
		t.Errorf("help: %v\n%s", err, stdout)
	}
}

func TestDefaultCitiesPath(t *testing.T) {
	// The test runs in cmd/knn: the repository root is two folders up.
	p := defaultCitiesPath()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if want := filepath.Join(root, "..", "shared", "data", "cities.csv"); p != want {
		t.Errorf("default cities path %s, want %s", p, want)
	}
}
