package mpi_test

import (
	"context"
	"fmt"
	"log"
	"runtime"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/mpi"
)

// A program run by `mpirun -np 4 prog`: rank 0's references go to every
// rank, each rank answers its share of 2^24 generated observations on its
// engine, and rank 0 gathers the answers. (knn run --mpi does the same.)
func Example() {
	runtime.LockOSThread() // every MPI call from this thread
	lib, err := mpi.Open()
	if err != nil {
		log.Fatal(err)
	}
	world, err := lib.Init()
	if err != nil {
		log.Fatal(err)
	}
	defer lib.Finalize()
	rank, _ := world.Rank()
	size, _ := world.Size()

	// Rank 0's reference columns (radians) go to every rank.
	var lat, lon []float64
	if rank == 0 {
		lat, lon = []float64{0.1, -0.7, 1.2}, []float64{0.5, 2.9, -1.4}
	}
	lat, lon, err = world.BcastRadians(lat, lon, 0)
	if err != nil {
		world.Abort(1)
	}
	refs := geoknn.Radians64(lat, lon)
	n := 1 << 24
	counts := mpi.Shares(n, size)
	lo, hi := mpi.Range(counts, rank)
	obs, _ := geoknn.Generated(geoknn.UniformSphere, n, 1)

	s, err := geoknn.NewSearcher(geoknn.Options{})
	if err != nil {
		world.Abort(1)
	}
	defer s.Close()
	res, err := s.Nearest(context.Background(), obs.Slice(lo, hi), refs)
	if err != nil {
		world.Abort(1)
	}
	var all *geoknn.Result
	if rank == 0 {
		all = geoknn.NewResult(n)
	}
	var allIndex []uint32
	if all != nil {
		allIndex = all.Index
	}
	if err := mpi.Gather(world, res.Index, allIndex, counts, 1, 0, 1); err != nil {
		world.Abort(1)
	}
	if rank == 0 {
		fmt.Println("observation 0's nearest reference:", all.Index[0])
	}
}
