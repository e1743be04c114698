// Command gonearest times the Go API's nearest query on the points that
// python/bench/bench_nearest.py wrote, so that the Python call is compared
// with the very call the worker makes (Index.Nearest on float64 radian
// columns), on the same engine and the same points.
//
//	go run ./python/bench/gonearest --dir DIR --engine cpu --repeat 3
//
// DIR holds ref.f64 and obs.f64: n latitudes then n longitudes, radians,
// little-endian float64. It prints the best time of the repeats.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn"
)

func main() {
	dir := flag.String("dir", "", "directory of ref.f64 and obs.f64")
	engineName := flag.String("engine", "cpu", "auto, cpu or gpu")
	repeat := flag.Int("repeat", 3, "queries timed (the best is printed)")
	flag.Parse()
	if err := run(*dir, *engineName, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "gonearest:", err)
		os.Exit(1)
	}
}

func run(dir, engineName string, repeat int) error {
	engine, err := geoknn.ParseEngine(engineName)
	if err != nil {
		return err
	}
	ref, err := load(filepath.Join(dir, "ref.f64"))
	if err != nil {
		return err
	}
	obs, err := load(filepath.Join(dir, "obs.f64"))
	if err != nil {
		return err
	}
	x, err := geoknn.NewIndex(ref, geoknn.Options{Engine: engine})
	if err != nil {
		return err
	}
	defer x.Close()
	best, name := time.Duration(1<<62), ""
	for range repeat {
		t := time.Now()
		res, err := x.Nearest(context.Background(), obs)
		if err != nil {
			return err
		}
		best, name = min(best, time.Since(t)), res.Stats.Engine
	}
	fmt.Printf("go_seconds %.4f engine %s obs %d ref %d\n", best.Seconds(), name, obs.Len(), ref.Len())
	return nil
}

// load reads n latitudes then n longitudes (float64 radians).
func load(path string) (geoknn.Points, error) {
	b, err := os.ReadFile(path)
	if err != nil || len(b)%16 != 0 || len(b) == 0 {
		return geoknn.Points{}, fmt.Errorf("%s: want 16 bytes a point (%v)", path, err)
	}
	all := unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
	n := len(all) / 2
	return geoknn.Radians64(all[:n:n], all[n:]), nil
}
