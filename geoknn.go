// Package geoknn finds, for every observation point on Earth, the nearest
// reference point by great-circle (haversine) distance: exactly, for
// hundreds of millions of observations against tens of thousands of
// references, on every NVIDIA GPU of a host or on all CPU cores.
//
// The answer contract: for every observation the returned reference is at
// most 1 m farther than the true nearest (float64 haversine on a sphere of
// radius EarthRadius), the reported distance is within 1 m, and ties go to
// the lowest reference index.
//
// GetNearest answers one query; a Searcher keeps GPU contexts, kernels and
// buffers between queries, as a simulation whose references move every
// step needs.
package geoknn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/engine"
)

// EarthRadius is the mean Earth radius in metres used for distances.
const EarthRadius = 6371008.8

// Engine selects where queries run.
type Engine int

const (
	// Auto uses the GPUs when a CUDA driver and GPU are present, else the CPU.
	Auto Engine = iota
	CPU
	GPU
)

func (e Engine) String() string {
	switch e {
	case CPU:
		return "cpu"
	case GPU:
		return "gpu"
	}
	return "auto"
}

// ParseEngine parses "auto", "cpu" or "gpu".
func ParseEngine(s string) (Engine, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return Auto, nil
	case "cpu":
		return CPU, nil
	case "gpu":
		return GPU, nil
	}
	return Auto, fmt.Errorf("unknown engine %q (want auto, cpu or gpu)", s)
}

// Algorithm is how the nearest reference is found; see engine.Algorithm.
type Algorithm = engine.Algorithm

// Algorithms.
const (
	Grid  = engine.Grid
	Brute = engine.Brute
	Seed  = engine.Seed
)

// MemoryMode is where the GPU engine keeps observations and answers; see
// engine.MemoryMode.
type MemoryMode = engine.MemoryMode

// Memory modes.
const (
	DeviceMemory  = engine.DeviceMemory
	ManagedMemory = engine.ManagedMemory
)

// Options configures a Searcher. The zero value is ready to use: automatic
// engine, the exact grid search, all GPUs, automatic batch size.
type Options struct {
	Engine    Engine
	Algorithm Algorithm
	// GPUs is the number of GPUs to use; 0 means all.
	GPUs int
	// BatchSize is the number of observations per job; 0 sizes jobs from
	// free GPU memory (or a cache-friendly size on the CPU).
	BatchSize int
	// GridSide fixes the grid's cells per axis (for benchmarks); 0 chooses
	// from a sample of the query.
	GridSide int
	Memory   MemoryMode
	// CPUWorkers is the number of goroutines of the CPU engine; 0 means
	// GOMAXPROCS.
	CPUWorkers int
	// Progress, if set, is called as jobs finish with the observations done.
	Progress func(done, total int)
}

// Result holds one answer per observation, in input order.
type Result struct {
	Index    []uint32  // index of the nearest reference
	Distance []float32 // great-circle angle to it, radians
	// Engine is "cpu" or "gpu"; Devices says which ones ran the query.
	Engine  string
	Devices []string
	// Fallback explains why Auto chose the CPU, if it did.
	Fallback string
	Stats    engine.Stats
}

// Metres is observation i's distance in metres.
func (r *Result) Metres(i int) float64 { return float64(r.Distance[i]) * EarthRadius }

// Searcher answers queries on one engine, keeping its state between them.
// It is not safe for concurrent use; Close releases it.
type Searcher struct {
	opts     Options
	eng      engine.Engine
	name     string
	fallback string
}

// NewSearcher opens the engine that opts asks for. With Engine Auto and no
// usable GPU it opens the CPU engine and records why in Fallback.
func NewSearcher(opts Options) (*Searcher, error) {
	s := &Searcher{opts: opts}
	if opts.Engine != CPU {
		g, err := engine.NewGPU(engine.GPUOptions{Devices: opts.GPUs, Memory: opts.Memory})
		switch {
		case err == nil:
			s.eng, s.name = g, "gpu"
			return s, nil
		case opts.Engine == GPU:
			return nil, fmt.Errorf("geoknn: GPU engine: %w", err)
		case errors.Is(err, cuda.ErrNoDriver):
			s.fallback = "no CUDA driver (libcuda.so.1 not found)"
		case errors.Is(err, engine.ErrNoGPU):
			s.fallback = err.Error()
		default:
			s.fallback = "GPU unusable: " + err.Error()
		}
	}
	if opts.Algorithm == Seed {
		return nil, errors.New("geoknn: the seed algorithm runs on the GPU only")
	}
	s.eng, s.name = engine.NewCPU(opts.CPUWorkers), "cpu"
	return s, nil
}

// Engine is "cpu" or "gpu".
func (s *Searcher) Engine() string { return s.name }

// Fallback explains why an Auto searcher runs on the CPU ("" otherwise).
func (s *Searcher) Fallback() string { return s.fallback }

// Close releases the engine's resources.
func (s *Searcher) Close() error { return s.eng.Close() }

// Nearest answers a query on orb.Point slices (longitude, latitude in
// degrees).
func (s *Searcher) Nearest(ctx context.Context, obs, ref []orb.Point) (*Result, error) {
	o, err := Radians(obs)
	if err != nil {
		return nil, fmt.Errorf("geoknn: observation %w", err)
	}
	r, err := Radians(ref)
	if err != nil {
		return nil, fmt.Errorf("geoknn: reference %w", err)
	}
	return s.NearestRadians(ctx, o, r)
}

// NearestRadians answers a query on radian columns without copying them
// (engine.Radians32 or engine.Radians64).
func (s *Searcher) NearestRadians(ctx context.Context, obs, ref engine.Points) (*Result, error) {
	n := obs.Len()
	res := &Result{Index: make([]uint32, n), Distance: make([]float32, n), Engine: s.name, Fallback: s.fallback}
	st, err := s.eng.Nearest(ctx, engine.Request{
		Obs: obs, Ref: ref, Algorithm: s.opts.Algorithm, BatchSize: s.opts.BatchSize, GridSide: s.opts.GridSide,
		Progress: s.opts.Progress,
	}, engine.Result{Index: res.Index, Distance: res.Distance})
	if err != nil {
		return nil, fmt.Errorf("geoknn: %w", err)
	}
	res.Devices, res.Stats = st.Devices, st
	return res, nil
}

// GetNearest answers one query: for every observation, the nearest
// reference and its distance. Points are orb.Point{lon, lat} in degrees.
func GetNearest(ctx context.Context, obs, ref []orb.Point, opts Options) (*Result, error) {
	s, err := NewSearcher(opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Nearest(ctx, obs, ref)
}

// GetNearestRadians answers one query on float32 radian columns, read in
// place: the entry point for callers that already hold large arrays.
func GetNearestRadians(ctx context.Context, obsLat, obsLon, refLat, refLon []float32, opts Options) (*Result, error) {
	s, err := NewSearcher(opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.NearestRadians(ctx, engine.Radians32(obsLat, obsLon), engine.Radians32(refLat, refLon))
}

// Radians validates points (orb.Point{lon, lat} in degrees) and converts
// them to the float64 radian columns the engines read. An error names the
// first invalid point: "12: latitude 91 is not in [-90, 90]".
func Radians(pts []orb.Point) (engine.Points, error) {
	lat, lon := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		if !(p.Lat() >= -90 && p.Lat() <= 90) {
			return engine.Points{}, fmt.Errorf("%d: latitude %v is not in [-90, 90]", i, p.Lat())
		}
		if !(p.Lon() >= -180 && p.Lon() <= 180) {
			return engine.Points{}, fmt.Errorf("%d: longitude %v is not in [-180, 180]", i, p.Lon())
		}
		lat[i], lon[i] = p.Lat()*math.Pi/180, p.Lon()*math.Pi/180
	}
	return engine.Radians64(lat, lon), nil
}
