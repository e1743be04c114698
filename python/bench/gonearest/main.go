// Command gonearest times the Go API's nearest query on the points that
// python/bench/bench_nearest.py wrote, so that the Python call is compared
// with the very call the worker makes (Index.Nearest on float64 radian
// columns), on the same engine and the same points.
//
//	go run ./python/bench/gonearest --dir DIR --engine cpu --repeat 3
//	go run ./python/bench/gonearest --dir DIR --engine gpu --serve
//
// DIR holds ref.f64 and obs.f64: n latitudes then n longitudes, radians,
// little-endian float64. It prints the best time of the repeats; with
// --serve it stays up with its index built and answers each line read
// on stdin with one query's time ("seconds S"), so that the benchmark
// interleaves its calls one by one with the Python calls, both warm.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/geoknn/geoknn"
)

func main() {
	dir := flag.String("dir", "", "directory of ref.f64 and obs.f64")
	engineName := flag.String("engine", "cpu", "auto, cpu or gpu")
	repeat := flag.Int("repeat", 3, "queries timed (the best is printed)")
	serve := flag.Bool("serve", false, "time one query a line of stdin, until its end")
	flag.Parse()
	if err := run(*dir, *engineName, *repeat, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "gonearest:", err)
		os.Exit(1)
	}
}

func run(dir, engineName string, repeat int, serve bool) error {
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
	if serve {
		return serveQueries(x, obs, os.Stdin, os.Stdout)
	}
	best, res := time.Duration(1<<62), (*geoknn.Result)(nil)
	for range repeat {
		took, r, err := nearest(x, obs)
		if err != nil {
			return err
		}
		best, res = min(best, took), r
	}
	fmt.Printf("go_seconds %.4f engine %s obs %d ref %d\n", best.Seconds(), res.Stats.Engine, obs.Len(), ref.Len())
	return nil
}

// nearest times one Index.Nearest call: a fresh Result each time, as a
// Go caller that keeps its answers gets.
func nearest(x *geoknn.Index, obs geoknn.Points) (time.Duration, *geoknn.Result, error) {
	t := time.Now()
	res, err := x.Nearest(context.Background(), obs)
	return time.Since(t), res, err
}

// serveQueries prints the engine and its devices, then one query's time
// for each line read from in. Each answer is let go before the next
// query, as the benchmark lets go of the Python call's arrays (whose
// buffers are then reused, as the Go heap's are).
func serveQueries(x *geoknn.Index, obs geoknn.Points, in io.Reader, out io.Writer) error {
	_, res, err := nearest(x, obs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "ready engine %s devices %s\n", res.Stats.Engine, strings.Join(res.Stats.Devices, "; "))
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		took, _, err := nearest(x, obs)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "seconds %.6f\n", took.Seconds())
	}
	return lines.Err()
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
