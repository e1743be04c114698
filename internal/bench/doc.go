// Package bench is the benchmark harness behind `knn bench`: it sweeps
// problem sizes, algorithms, engines, GPU counts and point generators,
// times every case on one open geoknn.Searcher, checks a sample of each
// case's answers, and reports a Markdown table, a JSON file with every
// sample and the environment, and a PNG plot.
//
// # The sweep
//
// Config.Shapes are cross products of observation and reference sizes
// (ParseSizes: 2^20:2^27:x4, 2^10,2^12, ...); the union of their (obs, ref)
// pairs is swept in order, without repeats. Every combination of engine
// (cpu, gpu), GPU count (ParseGPUs: 1,2 or all) and algorithm (names checked
// by engine.ParseAlgorithm, so a new algorithm is accepted once the engine
// knows it) opens one Searcher, which then runs every generator and size
// pair: NewSearcher is paid once per combination, as a simulation would.
// Without a GPU, gpu combinations are skipped with one note; GPU counts
// above those present likewise; an algorithm the CPU engine refuses (seed)
// is skipped on the CPU with a note.
//
// Points: each generator's observations (seed Config.Seed) and references
// (Config.Seed+1) are generated once, as float64 radian columns, at the
// largest size swept; a case of n points uses the first n, which are what
// the generator gives for n points. The cities generator queries the sphere
// observations against the whole cities file (formats.ReadFile); its
// reference count is the file's, whatever the shapes say.
//
// # A case
//
// Config.Warmup untimed runs, then Config.Repeat timed runs of
// Searcher.Nearest, each after a runtime.GC so that the previous
// answer's garbage is not collected inside a timed run. Per run the harness
// records the wall time of the call, and the engine's Stats: Wall, Kernel
// (the GPU kernels' time from CUDA events), Refined and Jobs. The
// summaries are the median, minimum and maximum; rates come from the
// medians.
//
// The seed algorithm (the float32 baseline brute-force kernel) is ten times slower
// than brute force: a seed case of more than Config.SeedMaxPairs pairs is
// timed on its first SeedMaxPairs/ref observations and its times multiplied
// by obs/measured (marked ~ in the table), which is exact for a kernel whose
// time is proportional to pairs once the GPU is full (2^40 pairs keep an
// H200 busy 2.5 s); with SeedScale false it is skipped with a note instead.
//
// # Verdicts
//
// After the timed runs, Config.Validate answers of the last run, drawn
// reproducibly from Config.Seed, are checked with validate.Exact against the
// float64 haversine brute force over every reference (orb.Points are built
// for the sample and the references only). ok: all within 1 m. A case with
// wrong answers is FAIL: its times are not reported as results (no table
// cells, no plot, no speed-ups), and `knn bench` exits 1. The seed algorithm
// computes the haversine in float32 with fast trigonometry and is off by a
// few metres by design (up to 5 m measured on an H200): its verdict is
// "approx" when every answer is within SeedTolerance (10 m), which is not a
// failure, and FAIL beyond. A query that fails is ERROR, and the rest of
// its searcher's cases are skipped (a failed GPU query usually leaves the
// context unusable).
//
// # Derived figures
//
// pairs/s and obs/s are from the wall median. The speed-up over seed is
// the seed case's median over this case's, for the same engine, GPU count,
// generator and sizes in the same sweep: of wall times in the table, of
// kernel times as well in the JSON. For GPU brute force the table gives the
// per cent of the FP32 instruction peak: pairs/s(kernel) x 7 FP32
// instructions a pair (3 FADD, 1 FMUL, 2 FFMA, 1 FMNMX) / (SMs x 128 lanes x
// clock), which is DeviceInfo.FP32PeakFLOPS()/2 instructions/s, summed over
// the GPUs used. For GPU grid it gives the memory throughput, obs x (16 B
// read + 8 B written) / kernel median, against the bandwidth from the device
// attributes (MemoryBandwidth: 2 x memory clock x bus width / 8).
//
// # Output
//
// Report.WriteMarkdown writes the environment, the table, the Legend and the
// notes; Report.WriteJSON the whole Report (schema "geoknn-bench/1": the
// command line, Go version, GOOS/GOARCH, CPUs, the git commit of the binary
// or the working directory, the CUDA driver and every GPU, the settings,
// and per case every sample) atomically; Report.Plot a PNG of time against
// pairs on log-log axes, one panel per shape, and a panel of speed-up
// against GPU count when some algorithm ran at several counts.
package bench
