package bench

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/cuda"
)

// Env is where a sweep ran.
type Env struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	// Commit is the module's git revision (the binary's vcs.revision, else
	// `git rev-parse HEAD` in the working directory, else "unknown");
	// Modified says the tree had uncommitted changes, where known.
	Commit   string `json:"commit"`
	Modified bool   `json:"modified,omitempty"`
	// DriverVersion is the CUDA driver's version (13000 for 13.0), 0 without
	// a driver; GPUError says why no GPU was listed.
	DriverVersion int      `json:"driver_version"`
	GPUError      string   `json:"gpu_error,omitempty"`
	Devices       []Device `json:"devices"`
}

// Device is one GPU as geoknn.ListDevices describes it, with its peaks.
type Device struct {
	Ordinal           int    `json:"ordinal"`
	Name              string `json:"name"`
	Multiprocessors   int    `json:"multiprocessors"`
	ComputeCapability [2]int `json:"compute_capability"`
	ClockMHz          int    `json:"clock_mhz"`
	TotalMemory       uint64 `json:"total_memory"`
	MemoryBusBits     int    `json:"memory_bus_bits"`
	MemoryClockMHz    int    `json:"memory_clock_mhz"`
	// FP32PeakFLOPS is DeviceInfo.FP32PeakFLOPS: 2 x lanes x SMs x clock.
	FP32PeakFLOPS float64 `json:"fp32_peak_flops"`
	// MemoryBandwidth is 2 x memory clock x bus width / 8, bytes/s: see
	// MemoryBandwidth.
	MemoryBandwidth float64 `json:"memory_bandwidth"`
}

// MemoryBandwidth is a GPU's theoretical memory bandwidth in bytes/s from
// its attributes: 2 (double data rate) x memory clock x bus width / 8, the
// formula of CUDA's deviceQuery and bandwidthTest samples. HBM needs care:
// its true interface clock is not what the attribute holds, but the driver
// reports a clock and a bus width whose DDR product matches the data sheet.
// An H200 reports 3201 MHz and 6016 bits (not the 6144 bits of six stacks),
// which gives 4.81 TB/s against the 4.8 TB/s of the data sheet. It is 0
// when the driver reports no memory clock or bus width.
func MemoryBandwidth(d geoknn.DeviceInfo) float64 {
	return 2 * float64(d.MemoryClockMHz) * 1e6 * float64(d.MemoryBusBits) / 8
}

func collectEnv(devs []geoknn.DeviceInfo, driver int, devErr error) Env {
	e := Env{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPUModel: cpuModel(),
		DriverVersion: driver, Devices: []Device{}}
	e.Hostname, _ = os.Hostname()
	e.Commit, e.Modified = commit()
	switch {
	case errors.Is(devErr, cuda.ErrNoDriver):
		e.GPUError = "no CUDA driver (libcuda.so.1 not found)"
	case devErr != nil:
		e.GPUError = devErr.Error()
	case len(devs) == 0:
		e.GPUError = "no CUDA GPU"
	}
	for _, d := range devs {
		e.Devices = append(e.Devices, Device{Ordinal: d.Ordinal, Name: d.Name, Multiprocessors: d.Multiprocessors,
			ComputeCapability: d.ComputeCapability, ClockMHz: d.ClockMHz, TotalMemory: d.TotalMemory,
			MemoryBusBits: d.MemoryBusBits, MemoryClockMHz: d.MemoryClockMHz,
			FP32PeakFLOPS: d.FP32PeakFLOPS(), MemoryBandwidth: MemoryBandwidth(d)})
	}
	return e
}

// commit is the git revision: from the build (go build -buildvcs=true in a
// checkout), else from `git rev-parse HEAD`, else "unknown".
func commit() (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, modified := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, modified
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	rev := strings.TrimSpace(string(out))
	if err != nil || rev == "" {
		return "unknown", false
	}
	st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	return rev, err == nil && len(strings.TrimSpace(string(st))) > 0
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
