package numpyio

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
	"github.com/paulmach/orb"
)

// readFile reads a .npy or .npz file as package formats reads it, by
// its extension, for the tests of the readers' contract.
func readFile(path string) ([]orb.Point, error) {
	return readFileWith(context.Background(), path, pointio.ReadOptions{})
}

func readFileWith(ctx context.Context, path string, opts pointio.ReadOptions) ([]orb.Point, error) {
	if strings.EqualFold(filepath.Ext(path), ".npz") {
		return ReadNPZFile(path, opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read points: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return ReadNPY(bufio.NewReader(pointio.ContextReader(ctx, f)), path, fi.Size(), opts.Radians)
}

// readFileRadians reads as formats.ReadFileRadians does: a C-order .npy
// by rows, anything else whole.
func readFileRadians(ctx context.Context, path string, opts pointio.ReadOptions) (lat, lon []float64, ids []string, err error) {
	if strings.EqualFold(filepath.Ext(path), ".npy") {
		if lat, lon, ok, err := ReadNPYRadians(ctx, path, opts.Radians); ok || err != nil {
			return lat, lon, nil, err
		}
	}
	pts, err := readFileWith(ctx, path, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	lat, lon = pointio.AppendRadiansParallel(nil, nil, pts)
	return lat, lon, nil, nil
}

// openChunks opens a .npy file by row ranges and an .npz whole, as
// formats.OpenChunks does.
func openChunks(ctx context.Context, path string, opts pointio.ReadOptions, rows int) (stream.ChunkReader, error) {
	if strings.EqualFold(filepath.Ext(path), ".npy") {
		return OpenNPYFile(path, opts.Radians, rows)
	}
	return pointio.ReadWholeChunks(ctx, path, opts, rows, readFileRadians)
}
