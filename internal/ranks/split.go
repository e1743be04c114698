package ranks

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/geoknn/geoknn/mpi"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/arrowio"
	"github.com/geoknn/geoknn/pointio/numpyio"
)

// Shares splits n observations among size ranks: evenly, or where they
// write one file of format together in groups of rows (Parquet's row
// groups, GroupRows), in whole groups (the last rank's last may be
// short), so that each rank's groups are one process's. format "": the
// ranks do not write together.
func Shares(format string, n, size int) []int {
	g := GroupRows(format)
	if g == 0 {
		return mpi.Shares(n, size)
	}
	counts := mpi.Shares((n+g-1)/g, size)
	slices.Reverse(counts) // the spare groups to the first ranks: rank 0 spills nothing
	left := n
	for r, groups := range counts {
		counts[r] = min(left, groups*g)
		left -= counts[r]
	}
	return counts
}

// Offset is where rank r's range begins: the counts of the ranks before.
func Offset(counts []int, r int) int {
	lo, _ := mpi.Range(counts, r)
	return lo
}

// RootSays is rank 0's yes or no (v there), told to every rank.
func RootSays(world mpi.Comm, rank int, v bool) (bool, error) {
	b := []int64{0}
	if rank == 0 && v {
		b[0] = 1
	}
	err := world.Bcast(mpi.Bytes(b), 0)
	return b[0] == 1, err
}

// RowFile reads a points file by row range, so that every rank reads its
// own rows.
type RowFile struct {
	rows func() (int64, error) // how many (an error where it cannot be read by rows)
	read func(ctx context.Context, lo, hi int64) (lat, lon []float64, err error)
	n    int64 // the rows, once every rank agreed on them (AgreeRows)
}

// OpenRows is path read by row range: a C-order .npy file (rows at fixed
// offsets) or a Parquet file (the row groups that hold them); nil for
// any other file. opts names the columns and units, as for reading the
// whole file.
func OpenRows(path string, opts pointio.ReadOptions) *RowFile {
	switch {
	case strings.ToLower(filepath.Ext(path)) == ".npy":
		return &RowFile{
			rows: func() (int64, error) {
				n, ok, err := numpyio.NPYRows(path)
				if err == nil && !ok {
					err = errors.New("a Fortran-order file")
				}
				return int64(n), err
			},
			read: func(ctx context.Context, lo, hi int64) ([]float64, []float64, error) {
				return numpyio.ReadNPYRadiansRows(ctx, path, opts.Radians, int(lo), int(hi))
			},
		}
	case arrowio.IsParquet(path): // by extension or, without one, by content, as the readers tell
		return &RowFile{
			rows: func() (int64, error) { return arrowio.ParquetRows(path) },
			read: func(ctx context.Context, lo, hi int64) ([]float64, []float64, error) {
				lat, lon, _, err := arrowio.ReadFileRadiansRows(ctx, path, opts, lo, hi)
				return lat, lon, err
			},
		}
	}
	return nil
}

// AgreeRows is rf (rank 0's; every rank opens its own) as every rank can
// read it, or nil where rank 0 must read the file and scatter it: rank 0
// reads the count; every rank then checks it can read as many, and one
// that cannot (a file on rank 0's disk only) sends the job back to
// reading at rank 0.
func AgreeRows(world mpi.Comm, rank int, rf *RowFile) (*RowFile, error) {
	head := []int64{-1}
	if rank == 0 && rf != nil {
		if n, err := rf.rows(); err == nil && n > 0 {
			head[0] = n
		}
	}
	if err := world.Bcast(mpi.Bytes(head), 0); err != nil || head[0] < 0 {
		return nil, err
	}
	cannot := 0.0
	if rank != 0 { // rank 0 has just read it; a rank may see no row file where rank 0 sniffed one
		if rf == nil {
			cannot = 1
		} else if n, err := rf.rows(); err != nil || n != head[0] {
			cannot = 1
		}
	}
	ranks, err := world.SumFloat64(cannot)
	if err != nil || ranks > 0 {
		return nil, err
	}
	rf.n = head[0]
	return rf, nil
}

// ReadShare reads the rank's share of the rows (split as Shares splits
// them for format), and returns every rank's count.
func (rf *RowFile) ReadShare(ctx context.Context, format string, rank, size int) (counts []int, lat, lon []float64, err error) {
	counts = Shares(format, int(rf.n), size)
	lo, hi := mpi.Range(counts, rank)
	lat, lon, err = rf.read(ctx, int64(lo), int64(hi))
	return counts, lat, lon, err
}

// SpreadObs gives each rank its range of the n observations rank 0 holds
// (obs; n and generated are read there alone): where generated (a
// generator's points, which every rank can make alike), none is sent and
// made is true, the rank to make its own; else each rank's range is
// scattered as float64 radian columns. counts are every rank's, split as
// Shares splits them for format.
func SpreadObs(world mpi.Comm, rank, size int, format string, obs Points, generated bool) (counts []int, lat, lon []float64, made bool, err error) {
	head := []int64{0, 0}
	if rank == 0 {
		head[0] = int64(obs.Len())
		if generated {
			head[1] = 1
		}
	}
	if err := world.Bcast(mpi.Bytes(head), 0); err != nil {
		return nil, nil, nil, false, err
	}
	counts = Shares(format, int(head[0]), size)
	if head[1] == 1 {
		return counts, nil, nil, true, nil
	}
	lat, lon, err = Scatter(world, obs, counts, 0)
	return counts, lat, lon, false, err
}
