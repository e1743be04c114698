package ranks

import "github.com/geoknn/geoknn/mpi"

// The mpi bindings move plain radian columns; these take points in any
// form at the sending rank (the root package's Points among them).

// Points are a set of points in radians: at i, and as float64 columns
// where they are held so (nil otherwise).
type Points interface {
	Len() int
	At(i int) (latRad, lonRad float64)
	Float64() (latRad, lonRad []float64)
}

// Bcast sends rank root's points to every rank as float64 radian
// columns; the other ranks' p is not read.
func Bcast(c mpi.Comm, p Points, root int) (lat, lon []float64, err error) {
	if lat, lon, err = rootColumns(c, p, root); err != nil {
		return nil, nil, err
	}
	return c.BcastRadians(lat, lon, root)
}

// Scatter sends each rank its range (counts, as Shares gives) of rank
// root's points, as float64 radian columns.
func Scatter(c mpi.Comm, p Points, counts []int, root int) (lat, lon []float64, err error) {
	if lat, lon, err = rootColumns(c, p, root); err != nil {
		return nil, nil, err
	}
	return c.ScatterRadians(lat, lon, counts, root)
}

// rootColumns is p as float64 radian columns at rank root (its own where
// it holds them, else a copy), and nothing at the other ranks.
func rootColumns(c mpi.Comm, p Points, root int) (lat, lon []float64, err error) {
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
