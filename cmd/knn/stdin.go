package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/paulmach/orb"
)

// readStdin reads points from standard input: text (CSV, GeoJSON, gzip)
// and .npy as a stream; formats read from their end (Parquet, Arrow, .npz)
// are first copied to a temporary file, removed afterwards.
func readStdin(ctx context.Context, _ string, opts pointio.ReadOptions) ([]orb.Point, []string, error) {
	br := bufio.NewReaderSize(os.Stdin, 1<<20)
	head, _ := br.Peek(8)
	ext := ""
	switch h := string(head); {
	case strings.HasPrefix(h, "PAR1"):
		ext = ".parquet"
	case strings.HasPrefix(h, "ARROW1"):
		ext = ".arrow"
	case strings.HasPrefix(h, "\xff\xff\xff\xff"):
		ext = ".arrows" // an Arrow IPC stream
	case strings.HasPrefix(h, "PK\x03\x04"):
		ext = ".npz"
	}
	if ext == "" {
		return pointio.ReadReaderIDs(ctx, br, "-", opts)
	}
	tmp, err := spool(ctx, br, ext)
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp)
	if ext == ".npz" {
		return pointio.ReadFileIDs(ctx, tmp, opts)
	}
	return arrowio.ReadFileIDs(ctx, tmp, opts)
}

// spool copies r to a new temporary file named *ext and returns its path.
func spool(ctx context.Context, r io.Reader, ext string) (string, error) {
	f, err := os.CreateTemp("", "knn-stdin-*"+ext)
	if err != nil {
		return "", fmt.Errorf("standard input: %w", err)
	}
	_, err = io.Copy(f, pointio.ContextReader(ctx, r))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("standard input: %w", err)
	}
	return f.Name(), nil
}
