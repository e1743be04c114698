package bench

import (
	"fmt"

	"github.com/paulmach/orb"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/pointio/formats"
	"github.com/geoknn/geoknn/sphere"
)

// column is a generated or loaded point set as float64 radian columns, the
// largest any case of the sweep needs; a case of n points uses its first n
// (each generator draws point i from its block's stream in order, so a
// prefix is also what the generator gives for n points).
type column struct {
	lat, lon []float64
	pts      []orb.Point // degrees as read (files), nil for generated sets
	desc     string
}

func (c *column) len() int { return len(c.lat) }

func (c *column) points(n int) geoknn.Points {
	return geoknn.Radians64(c.lat[:n], c.lon[:n])
}

// point is point i in degrees: as read for files, else the radians through
// sphere.ToDegrees (the conversion linking the generators' two forms).
func (c *column) point(i int) orb.Point {
	if c.pts != nil {
		return c.pts[i]
	}
	return sphere.ToDegrees(c.lat[i], c.lon[i])
}

// degrees is the first n points in degrees, made once and kept.
func (c *column) degrees(n int) []orb.Point {
	if c.pts == nil || len(c.pts) < n {
		pts := make([]orb.Point, c.len())
		for i := range pts {
			pts[i] = sphere.ToDegrees(c.lat[i], c.lon[i])
		}
		c.pts = pts
	}
	return c.pts[:n]
}

func generate(gen string, n int, seed uint64) (*column, error) {
	fill, err := sphere.RadiansByName(gen)
	if err != nil {
		return nil, err
	}
	c := &column{lat: make([]float64, n), lon: make([]float64, n), desc: fmt.Sprintf("%s generator, seed %d", gen, seed)}
	if err := fill(n, seed, c.lat, c.lon); err != nil {
		return nil, err
	}
	return c, nil
}

func readCities(path string) (*column, error) {
	if path == "" {
		return nil, fmt.Errorf("the %s generator needs the cities file: pass --cities PATH", GenCities)
	}
	pts, err := formats.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the %s generator reads its references from %s: %w", GenCities, path, err)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("the %s generator: %s holds no points", GenCities, path)
	}
	cols, err := geoknn.Degrees(pts)
	if err != nil {
		return nil, fmt.Errorf("the %s generator: %s: point %w", GenCities, path, err)
	}
	lat, lon := cols.Float64()
	return &column{lat: lat, lon: lon, pts: pts, desc: path}, nil
}

// datasets generates each point set once, at the largest size needed, and
// keeps it for the whole sweep. Observations are drawn with the sweep's
// seed and references with seed+1, as `knn run` does.
type datasets struct {
	seed           uint64
	maxObs, maxRef int
	cities         *column
	obs, ref       map[string]*column
}

func newDatasets(seed uint64, maxObs, maxRef int, cities *column) *datasets {
	return &datasets{seed: seed, maxObs: maxObs, maxRef: maxRef, cities: cities,
		obs: map[string]*column{}, ref: map[string]*column{}}
}

// get returns the observation and reference columns of generator gen.
func (d *datasets) get(gen string) (obs, ref *column, err error) {
	og := gen
	if gen == GenCities {
		og = citiesObsGen
	}
	if obs = d.obs[og]; obs == nil {
		if obs, err = generate(og, d.maxObs, d.seed); err != nil {
			return nil, nil, err
		}
		d.obs[og] = obs
	}
	if gen == GenCities {
		return obs, d.cities, nil
	}
	if ref = d.ref[gen]; ref == nil {
		if ref, err = generate(gen, d.maxRef, d.seed+1); err != nil {
			return nil, nil, err
		}
		d.ref[gen] = ref
	}
	return obs, ref, nil
}
