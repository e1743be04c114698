package engines

import (
	"errors"
	"fmt"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/gpu"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/trace"
)

// Kind is the engine a caller asks for.
type Kind int

const (
	// Auto opens the GPUs when a CUDA driver and a GPU are present, else
	// the CPU.
	Auto Kind = iota
	CPU
	GPU
)

// Options says which engine to open and how.
type Options struct {
	Kind Kind
	// Devices is the number of GPUs to use (0: all from First on); First
	// is the ordinal of the first, modulo the GPUs present.
	Devices, First int
	Memory         MemoryMode
	// CPUWorkers is the CPU engine's goroutines; 0 means GOMAXPROCS.
	CPUWorkers int
	// Algorithm is the queries' algorithm: Seed runs on GPUs only, so the
	// CPU engine is refused for it.
	Algorithm engine.Algorithm
	// Trace, if set, receives the GPU engine's start.
	Trace *trace.Recorder
}

// Opened is an open engine: the GPUs (OnGPU) or the CPU, and, when Auto
// passed the GPUs over, why (Fallback).
type Opened struct {
	Engine   engine.Engine
	OnGPU    bool
	Fallback string
}

// Open opens the engine o asks for. On Auto, a GPU engine that cannot open
// leaves the CPU engine, with the reason in Fallback; asked for by name,
// it is an error.
func Open(o Options) (Opened, error) {
	var fallback string
	if o.Kind != CPU {
		g, err := gpu.NewGPU(gpu.GPUOptions{Devices: o.Devices, First: o.First, Memory: o.Memory, Trace: o.Trace})
		switch {
		case err == nil:
			return Opened{Engine: g, OnGPU: true}, nil
		case o.Kind == GPU:
			return Opened{}, fmt.Errorf("GPU engine: %w", err)
		}
		fallback = fallbackReason(err)
	}
	if o.Algorithm == engine.Seed {
		return Opened{}, errors.New("the seed algorithm runs on the GPU only")
	}
	return Opened{Engine: cpu.NewCPU(o.CPUWorkers), Fallback: fallback}, nil
}

// fallbackReason says why the GPU engine could not open.
func fallbackReason(err error) string {
	switch {
	case errors.Is(err, ErrNoDriver):
		return "no CUDA driver (libcuda.so.1 not found)"
	case errors.Is(err, ErrNoGPU):
		return err.Error()
	}
	return "GPU unusable: " + err.Error()
}

// NewLocalIndex prepares ref for small queries answered on the calling
// goroutine (cpu.CPUIndex), and for the engines' large ones (Prepared).
func NewLocalIndex(ref index.Points) (engine.LocalIndex, error) {
	x, err := cpu.NewCPUIndex(ref)
	if err != nil {
		return nil, err // not a nil *CPUIndex in a non-nil interface
	}
	return x, nil
}

// MemoryMode is where the GPU engine keeps each job's observations and
// answers (gpu.MemoryMode).
type MemoryMode = gpu.MemoryMode

// The memory modes: device allocations through pinned staging, or managed
// allocations the host writes directly.
const (
	DeviceMemory  = gpu.DeviceMemory
	ManagedMemory = gpu.ManagedMemory
)

// ParseMemoryMode parses "device" or "managed".
func ParseMemoryMode(s string) (MemoryMode, error) { return gpu.ParseMemoryMode(s) }

// ErrNoDriver is wrapped by Open's error when no CUDA driver
// (libcuda.so.1) can be loaded; ErrNoGPU when it loads but finds no GPU.
var (
	ErrNoDriver = cuda.ErrNoDriver
	ErrNoGPU    = gpu.ErrNoGPU
)

// DeviceInfo describes one GPU.
type DeviceInfo = gpu.DeviceInfo

// PlanAhead plans a nearest query like req for the GPU engine before it
// is open (gpu.PlanAhead): host work, kept with req's prepared
// references.
func PlanAhead(req engine.Request) { gpu.PlanAhead(req) }

// ListDevices loads the CUDA driver and describes every GPU, with the
// driver's CUDA version (13000 for 13.0).
func ListDevices() ([]DeviceInfo, int, error) { return gpu.ListDevices() }
