// # Moving references
//
// Run simulates references that move over the Earth while observations come
// and go, and answers the nearest-reference query at every step on one
// geoknn.Searcher, which keeps the engine's state (GPU contexts, kernels,
// buffers) from step to step. Each reference has a speed (metres per
// second, uniform in [Config.MinSpeed, Config.MaxSpeed]) and a heading, and
// moves along its great circle: Propagate rotates float64 unit vectors, so
// the motion is exact across the poles and the antimeridian, and the heading
// is carried along the great circle (recomputed at every new position).
// Before every step after the first a fraction Config.Replace of the
// observations is replaced by fresh points of the observation generator.
// Step reports, per step, the query time, the observations replaced and the
// observations kept whose nearest reference changed.
//
// Everything works on float64 radian columns, in parallel over GOMAXPROCS
// goroutines in fixed blocks with their own PCG streams, so a simulation
// depends only on its Config (seed included), never on the number of cores,
// and 2^24 observations with 2^16 references cost little beyond the queries.
//
// Package simulator imports the root package geoknn (Run needs a Searcher):
// packages geoknn imports, engine among them, must not import simulator,
// not even from their internal tests.
package simulator
