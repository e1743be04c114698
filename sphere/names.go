package sphere

import (
	"fmt"
	"strings"

	"github.com/paulmach/orb"
)

// Names returns the names ByName and RadiansByName accept.
func Names() []string { return []string{"seed", "sphere", "clustered"} }

// ByName returns the generator called "seed" (SeedUniform), "sphere"
// (Sphere) or "clustered" (Clustered with DefaultClusters and
// DefaultSpreadKm).
func ByName(name string) (func(n int, seed uint64) []orb.Point, error) {
	switch name {
	case "seed":
		return SeedUniform, nil
	case "sphere":
		return Sphere, nil
	case "clustered":
		return func(n int, seed uint64) []orb.Point {
			return Clustered(n, seed, DefaultClusters, DefaultSpreadKm)
		}, nil
	}
	return nil, unknown(name)
}

// RadiansByName is ByName for the column forms.
func RadiansByName(name string) (func(n int, seed uint64, lat, lon []float64) error, error) {
	switch name {
	case "seed":
		return SeedUniformRadians, nil
	case "sphere":
		return SphereRadians, nil
	case "clustered":
		return func(n int, seed uint64, lat, lon []float64) error {
			return ClusteredRadians(n, seed, DefaultClusters, DefaultSpreadKm, lat, lon)
		}, nil
	}
	return nil, unknown(name)
}

// NewGenerator returns the Generator of the generator called name, with
// the clustered generator's centres drawn from seed (so its points come from
// the same clusters as Clustered's with that seed).
func NewGenerator(name string, seed uint64) (Generator, error) {
	switch name {
	case "seed":
		return seedBlock, nil
	case "sphere":
		return sphereBlock, nil
	case "clustered":
		return clusteredBlock(seed, DefaultClusters, DefaultSpreadKm)
	}
	return nil, unknown(name)
}

func unknown(name string) error {
	return fmt.Errorf("sphere: unknown generator %q (valid: %s)", name, strings.Join(Names(), ", "))
}
