// Package sphere holds what every part of geoknn agrees on about the Earth:
// the sphere distances are measured on (EarthRadiusMetres) and reproducible
// synthetic point sets on it.
//
// Every generator comes in two forms that produce the same points: one
// returns []orb.Point{lon, lat} in degrees, the other fills caller-provided
// latitude and longitude columns in radians, which avoids building
// orb.Points for very large sets (2^27 points and more). Generation runs in
// parallel over runtime.GOMAXPROCS(0) goroutines in fixed blocks of
// BlockSize points, each block drawing from its own PCG stream seeded from
// (seed, block) (ForBlocks), so the output depends only on the seed and never
// on the number of goroutines.
//
// The random draws are the same on every platform; the coordinates derived
// from them through math.Asin, math.Atan2 and friends are identical from run
// to run, and across platforms agree to within the last bits of those
// functions.
package sphere
