// Package simulator runs simulations whose references move along great
// circles (Run): the observations stay resident in the engine (a
// geoknn.Session), each step sends the moved references and the replaced
// observations, and the host prepares the next step while the GPUs answer
// the current one. Points come from the generators of package sphere, and
// every random draw from its reproducible block streams (sphere.ForBlocks),
// so a simulation depends only on its Config, never on the number of cores.
package simulator
