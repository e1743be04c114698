package bench

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/geoknn/geoknn"
)

// BenchmarkSweepCPU times a tiny sweep on the CPU (2^12 x 2^10 and
// 2^12 x 2^12, brute and every other CPU algorithm, one warm-up and one
// timed run, 256 answers validated) and reports the harness's share of it:
// overhead-% is the time outside the timed and warm-up queries (generating
// points, GC, validation, bookkeeping).
func BenchmarkSweepCPU(b *testing.B) {
	cfg := tinyCPU()
	cfg.Shapes = []Shape{{Obs: []int{1 << 12}, Ref: []int{1 << 10, 1 << 12}}}
	cfg.Warmup = 1
	cfg.Algorithms = []geoknn.Algorithm{geoknn.Brute}
	if grid, err := geoknn.ParseAlgorithm("grid"); err == nil {
		cfg.Algorithms = append(cfg.Algorithms, grid)
	}
	var queries, total time.Duration
	for b.Loop() {
		t := time.Now()
		rep, err := Run(context.Background(), cfg)
		if err != nil || rep.Failed() > 0 {
			b.Fatal(err, rep.Notes)
		}
		total += time.Since(t)
		for _, c := range rep.Cases {
			for _, w := range append(c.Wall, c.WarmupWall...) {
				queries += time.Duration(w * 1e9)
			}
		}
	}
	b.ReportMetric(100*float64(total-queries)/float64(total), "overhead-%")
}

func syntheticReport() *Report {
	r := &Report{Settings: Settings{Shapes: []Shape{{Obs: []int{1 << 20, 1 << 22, 1 << 24}, Ref: []int{1 << 16}}}}}
	for _, a := range []string{"seed", "brute", "grid"} {
		for g := 1; g <= 2; g++ {
			for _, obs := range []int{1 << 20, 1 << 22, 1 << 24} {
				pairs := float64(obs) * (1 << 16)
				r.Cases = append(r.Cases, Case{Engine: "gpu", GPUs: g, Algorithm: a, Generator: "sphere", Obs: obs, Ref: 1 << 16,
					Pairs: pairs, MeasuredObs: obs, Wall: []float64{pairs / 4e12 / float64(g), pairs / 3.9e12 / float64(g)},
					Kernel: []float64{pairs / 4.2e12 / float64(g)}, Verdict: VerdictOK})
			}
		}
	}
	r.Derive()
	return r
}

// BenchmarkPlot draws the PNG of an 18-case, two-panel report.
func BenchmarkPlot(b *testing.B) {
	r := syntheticReport()
	for b.Loop() {
		if err := r.WritePNG(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarkdown writes the table of the same report.
func BenchmarkMarkdown(b *testing.B) {
	r := syntheticReport()
	for b.Loop() {
		if err := r.WriteMarkdown(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
