package bench

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/geoknn/geoknn/internal/count"
)

// Legend explains the table's columns; WriteMarkdown prints it under the
// table.
const Legend = `Legend:
- #: row number (engine notes below refer to it). gpus: GPUs used (— on the CPU).
- obs, ref: observations and references; pairs = obs × ref. gen: the generator (cities: sphere observations
  against the cities file).
- kernel: median over the timed runs of Stats.Kernel, the GPU kernels' time measured with CUDA events (index
  build, sorts, queries, refine; summed over a GPU's jobs, whose kernels never overlap; the largest over GPUs);
  blank on the CPU. Copies in and out overlap other jobs' kernels and are in the JSON's engine_stats.
- wall: Searcher.Nearest (host preparation, transfers, kernels, answers back): median, min and max over
  --repeat timed runs, after --warmup untimed runs, all on one open Searcher.
- pairs/s = obs × ref / wall median; obs/s = obs / wall median.
- vs seed = wall median of the seed algorithm / this wall median, same engine, GPUs, generator, obs and ref,
  measured in this invocation; blank when seed was not swept (the JSON also has the kernel ratio).
- FP32 peak / GB/s: for GPU brute, % of FP32 peak = pairs/s(kernel) × 7 FP32 instructions per pair /
  (SMs × 128 lanes × clock), i.e. FP32PeakFLOPS()/2 instructions/s, summed over the GPUs used (64 lanes on
  sm_80), where pairs/s(kernel) = obs × ref / kernel median. For GPU grid, GB/s = (obs × 16 B read +
  obs × 8 B written) / kernel median, and the % is of the memory bandwidth from the device attributes,
  2 × memory clock × bus width / 8 (double data rate, as CUDA's deviceQuery), summed over the GPUs used.
- ~: seed timed on fewer observations (--seed-max-pairs) and its times scaled by obs / measured (the engine
  notes say how many), or a speed-up over such a seed case.
- verdict: a sample of --validate answers of the last timed run checked against the float64 haversine brute
  force (validate.Exact). ok: every answer within 1 m. approx: seed only, some answers beyond 1 m but all
  within 10 m (its float32 haversine is off by a few metres by design); not a failure. FAIL: wrong answers,
  times not reported. ERROR: the query failed. unchecked: --validate 0.`

// WriteMarkdown writes the report: a header with the environment, the
// table, the legend and the notes.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.writeHeader(&b)
	b.WriteString(r.Table())
	b.WriteString("\n")
	b.WriteString(Legend)
	b.WriteString("\n")
	writeList(&b, "Engine notes", r.engineNotes())
	writeList(&b, "Notes", r.Notes)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader writes the title and the list of the command, the host, its
// GPUs and the settings.
func (r *Report) writeHeader(b *strings.Builder) {
	e := r.Env
	fmt.Fprintf(b, "# knn bench\n\n")
	fmt.Fprintf(b, "- command: `%s`\n", strings.Join(r.CommandLine, " "))
	modified := ""
	if e.Modified {
		modified = " (modified)"
	}
	fmt.Fprintf(b, "- started %s, %.1f s; commit %s%s\n", r.Started.Format("2006-01-02 15:04:05 MST"), r.Seconds,
		e.Commit, modified)
	fmt.Fprintf(b, "- host: %d CPUs", e.NumCPU)
	if e.CPUModel != "" {
		fmt.Fprintf(b, " (%s)", e.CPUModel)
	}
	fmt.Fprintf(b, ", %s/%s, %s\n", e.GOOS, e.GOARCH, e.GoVersion)
	e.writeGPUs(b)
	s := r.Settings
	batch, above := "auto", "skipped above"
	if s.BatchSize > 0 {
		batch = fmt.Sprint(s.BatchSize)
	}
	if s.SeedScale {
		above = "scaled above"
	}
	fmt.Fprintf(b, "- warm-up %d, repeat %d, validate %d, seed %d, seed-max-pairs %s (%s), memory %s, batch %s\n\n",
		s.Warmup, s.Repeat, s.Validate, s.Seed, formatPairs(s.SeedMaxPairs), above, s.Memory, batch)
}

// writeGPUs writes the header's lines on the driver and each GPU, or why
// there is none.
func (e *Env) writeGPUs(b *strings.Builder) {
	if len(e.Devices) == 0 {
		fmt.Fprintf(b, "- GPUs: none (%s)\n", e.GPUError)
		return
	}
	fmt.Fprintf(b, "- CUDA driver %d.%d\n", e.DriverVersion/1000, e.DriverVersion%1000/10)
	for _, d := range e.Devices {
		fmt.Fprintf(b, "- GPU #%d %s: %d SMs at %d MHz, sm_%d%d, FP32 %.1f TFLOP/s (%.1f T instr/s); %.0f GiB, %d-bit at %d MHz, %.2f TB/s\n",
			d.Ordinal, d.Name, d.Multiprocessors, d.ClockMHz, d.ComputeCapability[0], d.ComputeCapability[1],
			d.FP32PeakFLOPS/1e12, d.FP32PeakFLOPS/2e12, float64(d.TotalMemory)/(1<<30), d.MemoryBusBits,
			d.MemoryClockMHz, d.MemoryBandwidth/1e12)
	}
}

// engineNotes is the engine's note on each case that has one, and how a
// scaled case was timed, by row number.
func (r *Report) engineNotes() []string {
	var notes []string
	for i := range r.Cases {
		if c := &r.Cases[i]; c.EngineNote != "" || c.Scaled() {
			n := c.EngineNote
			if c.Scaled() {
				n = strings.TrimPrefix(fmt.Sprintf("%s; timed on %s observations, times ×%.4g", n,
					FormatCount(c.MeasuredObs), c.Scale), "; ")
			}
			notes = append(notes, fmt.Sprintf("%d (%s): %s", i+1, c.String(), n))
		}
	}
	return notes
}

// writeList writes a titled Markdown list, or nothing when it is empty.
func writeList(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	b.WriteString("\n" + title + ":\n")
	for _, n := range items {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

// Table is the Markdown table, one row per case.
func (r *Report) Table() string {
	var b strings.Builder
	b.WriteString("| # | engine | gpus | algo | gen | obs | ref | kernel | wall median | wall min | wall max | pairs/s | obs/s | vs seed | FP32 peak / GB/s | verdict |\n")
	b.WriteString("|--:|---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for i := range r.Cases {
		b.WriteString("| " + strings.Join(r.Cases[i].cells(i+1), " | ") + " |\n")
	}
	return b.String()
}

// cells is the case's row of the table, numbered row.
func (c *Case) cells(row int) []string {
	gpus := "—"
	if c.Engine == EngineGPU {
		gpus = fmt.Sprint(c.GPUs)
	}
	cells := []string{fmt.Sprint(row), c.Engine, gpus, c.Algorithm, c.Generator, countCell(c.Obs), countCell(c.Ref)}
	if c.Valid() && len(c.Wall) > 0 {
		cells = append(cells, c.timeCells()...)
	} else {
		cells = append(cells, "—", "—", "—", "—", "—", "—", "", "")
	}
	return append(cells, c.verdictText())
}

// timeCells is the times and rates of a valid case, "~" marking those
// scaled from fewer observations.
func (c *Case) timeCells() []string {
	tilde := ""
	if c.Scaled() {
		tilde = "~"
	}
	kernel := ""
	if c.KernelStats.Median > 0 {
		kernel = tilde + FormatSeconds(c.KernelStats.Median)
	}
	return []string{kernel, tilde + FormatSeconds(c.WallStats.Median), tilde + FormatSeconds(c.WallStats.Min),
		tilde + FormatSeconds(c.WallStats.Max), tilde + FormatRate(c.PairsPerSec), tilde + FormatRate(c.ObsPerSec), c.vsSeedText(), c.peakText()}
}

// vsSeedText is the "vs seed" cell: the wall speed-up over seed.
func (c *Case) vsSeedText() string {
	switch {
	case c.Algorithm == "seed" && c.SpeedupWall > 0:
		return "1x"
	case c.SpeedupWall > 0 && c.SeedScaled:
		return fmt.Sprintf("~%.3gx", c.SpeedupWall)
	case c.SpeedupWall > 0:
		return fmt.Sprintf("%.3gx", c.SpeedupWall)
	}
	return ""
}

// peakText is the "FP32 peak / GB/s" cell.
func (c *Case) peakText() string {
	switch {
	case c.FP32PeakPct > 0:
		return fmt.Sprintf("%.0f%% FP32", c.FP32PeakPct)
	case c.GBps > 0 && c.BandwidthPct > 0:
		return fmt.Sprintf("%.0f GB/s (%.1f%%)", c.GBps, c.BandwidthPct)
	case c.GBps > 0:
		return fmt.Sprintf("%.0f GB/s", c.GBps)
	}
	return ""
}

// countCell is n for a table cell: blank for none.
func countCell(n int) string {
	if n == 0 {
		return ""
	}
	return FormatCount(n)
}

func (c *Case) verdictText() string {
	v := c.Validation
	switch c.Verdict {
	case VerdictOK:
		if v != nil {
			return fmt.Sprintf("ok (%d)", v.Checked)
		}
	case VerdictApprox:
		return fmt.Sprintf("approx (%d of %d beyond 1 m, max %.2f m)", v.IndexWrong+v.DistanceWrong, v.Checked,
			max(v.MaxExcessM, *v.MaxDistanceErrorM))
	case VerdictFail:
		if v != nil {
			return fmt.Sprintf("**FAIL** (%d of %d wrong)", max(v.IndexWrong, v.DistanceWrong), v.Checked)
		}
		return "**FAIL**"
	case VerdictError:
		msg := c.Error
		if len(msg) > 60 {
			msg = msg[:57] + "..."
		}
		return "**ERROR**: " + strings.ReplaceAll(msg, "|", "/")
	}
	return c.Verdict
}

// FormatSeconds writes a duration in seconds with 3 significant digits and
// a unit: 2.08 s, 184 ms, 81.2 µs.
func FormatSeconds(s float64) string {
	switch {
	case s <= 0 || math.IsNaN(s) || math.IsInf(s, 0):
		return ""
	case s >= 1:
		return sig3(s) + " s"
	case s >= 1e-3:
		return sig3(s*1e3) + " ms"
	case s >= 1e-6:
		return sig3(s*1e6) + " µs"
	}
	return sig3(s*1e9) + " ns"
}

// FormatRate writes a rate with 3 significant digits and an SI prefix:
// 4.22 T, 57.3 M.
func FormatRate(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	for _, p := range []struct {
		f float64
		s string
	}{{1e15, " P"}, {1e12, " T"}, {1e9, " G"}, {1e6, " M"}, {1e3, " k"}} {
		if v >= p.f {
			return sig3(v/p.f) + p.s
		}
	}
	return sig3(v)
}

func sig3(v float64) string {
	switch {
	case v >= 99.95:
		return fmt.Sprintf("%.0f", v)
	case v >= 9.995:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func formatPairs(p float64) string {
	if p >= 1 && p == math.Trunc(p) && p <= count.Max*count.Max {
		if e := math.Log2(p); e == math.Trunc(e) {
			return fmt.Sprintf("2^%d", int(e))
		}
	}
	return fmt.Sprintf("%.3g", p)
}
