package main

import (
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/mpi"
)

// The mpi bindings move plain radian columns; these give and take the
// root package's Points, in any form at the sending rank.

// bcastPoints sends rank root's points to every rank as float64 radian
// columns; the other ranks' p is ignored.
func bcastPoints(c mpi.Comm, p geoknn.Points, root int) (geoknn.Points, error) {
	lat, lon, err := rootColumns(c, p, root)
	if err == nil {
		lat, lon, err = c.BcastRadians(lat, lon, root)
	}
	if err != nil {
		return geoknn.Points{}, err
	}
	return geoknn.Radians64(lat, lon), nil
}

// scatterPoints sends each rank its range (counts, as mpi.Shares gives)
// of rank root's points, as float64 radian columns.
func scatterPoints(c mpi.Comm, p geoknn.Points, counts []int, root int) (geoknn.Points, error) {
	lat, lon, err := rootColumns(c, p, root)
	if err == nil {
		lat, lon, err = c.ScatterRadians(lat, lon, counts, root)
	}
	if err != nil {
		return geoknn.Points{}, err
	}
	return geoknn.Radians64(lat, lon), nil
}

// rootColumns is p as float64 radian columns at rank root (its own where
// it holds them, else a copy), and nothing at the other ranks.
func rootColumns(c mpi.Comm, p geoknn.Points, root int) (lat, lon []float64, err error) {
	me, err := c.Rank()
	if err != nil || me != root {
		return nil, nil, err
	}
	if lat, lon = p.Float64(); lat != nil {
		return lat, lon, nil
	}
	lat, lon = make([]float64, p.Len()), make([]float64, p.Len())
	for i := range lat {
		lat[i], lon[i] = p.At(i)
	}
	return lat, lon, nil
}
