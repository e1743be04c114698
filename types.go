package geoknn

import (
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
)

// Algorithm selects how the nearest reference is found.
type Algorithm int

const (
	// Grid searches a cell index over the references, rebuilt every query
	// (exact: the same answers as Brute). It is the default. Where a sample
	// of the query says no grid suits the references (crowded into a few
	// places, observations far from them) it walks a k-d tree instead (a
	// GPU session, which rebuilds its index on the device every query, runs
	// brute force there), and it runs as Brute where brute force is cheaper
	// (very few references).
	Grid = Algorithm(engine.Grid)
	// Brute compares every observation with every reference (exact).
	Brute = Algorithm(engine.Brute)
	// Seed is the float32 baseline brute-force kernel (seed.cu), kept as a
	// benchmark baseline: float32 haversine with fast trigonometry, not
	// exact (GPU only).
	Seed = Algorithm(engine.Seed)
)

func (a Algorithm) String() string { return engine.Algorithm(a).String() }

// ParseAlgorithm parses "grid", "brute" or "seed".
func ParseAlgorithm(s string) (Algorithm, error) {
	a, err := engine.ParseAlgorithm(s)
	return Algorithm(a), err
}

// MemoryMode selects where the GPU engine keeps each job's observations and
// answers.
type MemoryMode int

const (
	// DeviceMemory: plain device allocations, filled and drained by
	// asynchronous copies through pinned host buffers, so one job's copies
	// overlap another job's kernels.
	DeviceMemory = MemoryMode(engines.DeviceMemory)
	// ManagedMemory: the baseline kernel's design: managed allocations
	// the host writes directly, advised to live on their GPU and prefetched
	// there before the kernels, then prefetched back to the host.
	ManagedMemory = MemoryMode(engines.ManagedMemory)
)

func (m MemoryMode) String() string { return engines.MemoryMode(m).String() }

// ParseMemoryMode parses "device" or "managed".
func ParseMemoryMode(s string) (MemoryMode, error) {
	m, err := engines.ParseMemoryMode(s)
	return MemoryMode(m), err
}

// ErrNoDriver is wrapped by NewSearcher's error when the GPU engine is asked
// for and no CUDA driver (libcuda.so.1) can be loaded.
var ErrNoDriver = engines.ErrNoDriver

// ErrNoGPU is wrapped by NewSearcher's error when the GPU engine is asked
// for and the driver loads but finds no GPU.
var ErrNoGPU = engines.ErrNoGPU

// Stats describes how a query ran. It is the one documentation of the
// engines' statistics (engine.Stats), which have the same fields: statsOf
// converts them, and stops compiling if the two drift apart.
type Stats struct {
	Engine  string        // "cpu" or "gpu"
	Devices []string      // what ran it: "16 goroutines on 16 cores", "#0 NVIDIA H200 (132 SMs, ...)", ...
	Jobs    int           // jobs the observations were split into
	Wall    time.Duration // whole query, including preparation and copies
	// Device time by stage, measured with device events: summed over a
	// GPU's jobs, then the largest over GPUs; zero on the CPU. Kernel counts
	// every kernel (index build, sorts, queries, refine; the kernels of
	// successive jobs never overlap); Index is the part of it spent building
	// the grid index; Upload and Download are the observations' copies in
	// and the answers' copies out (summed over jobs; they overlap other
	// jobs' kernels, and a copy may queue behind the other job's copy in
	// the same direction).
	Kernel, Index, Upload, Download time.Duration
	// Refined counts observations whose float32 ranking was too close to
	// call and were re-ranked in float64 (GPU only).
	Refined int
	// Note says how the algorithm ran (grid shape, or why it fell back).
	Note string
}

// SessionStats describes one query of a Session.
type SessionStats struct {
	Stats
	// Changed counts the observations not replaced since the previous
	// query whose answer (reference index) differs from that query's; 0
	// on the first query.
	Changed int
	// Replaced is the number of observations replaced since the previous
	// query.
	Replaced int
	// Prepare is the host time spent preparing the references (unit
	// vectors, merged duplicates) and, when due, the grid plan.
	Prepare time.Duration
}

// statsOf is an engine's statistics in the public type: a conversion, so
// a field added to one and not the other stops it compiling.
func statsOf(st engine.Stats) Stats { return Stats(st) }

func sessionStats(st engine.SessionStats) SessionStats {
	return SessionStats{Stats: statsOf(st.Stats), Changed: st.Changed, Replaced: st.Replaced, Prepare: st.Prepare}
}

// DeviceInfo describes one GPU. Like Stats it mirrors the engine's type
// field for field, checked by the conversion that fills it.
type DeviceInfo struct {
	Ordinal           int
	Name              string
	Multiprocessors   int
	ComputeCapability [2]int
	ClockMHz          int
	TotalMemory       uint64 // bytes
	MemoryBusBits     int
	MemoryClockMHz    int
	L2Bytes           int
}

// FP32PeakFLOPS is the device's peak float32 rate, counting a fused
// multiply-add as two operations.
func (d DeviceInfo) FP32PeakFLOPS() float64 { return engines.DeviceInfo(d).FP32PeakFLOPS() }

func (d DeviceInfo) String() string { return engines.DeviceInfo(d).String() }

// ListDevices loads the CUDA driver and describes every GPU; it also returns
// the driver's CUDA version (13000 for 13.0). Without a driver the error
// wraps ErrNoDriver.
func ListDevices() ([]DeviceInfo, int, error) {
	devs, version, err := engines.ListDevices()
	out := make([]DeviceInfo, len(devs))
	for i, d := range devs {
		out[i] = DeviceInfo(d)
	}
	return out, version, err
}
