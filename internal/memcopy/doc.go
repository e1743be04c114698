// Package memcopy copies large byte ranges that nobody reads again soon:
// answers copied out of a GPU's page-locked staging into the caller's
// result. Stream writes them with non-temporal (streaming) stores where
// the CPU has AVX2, so that the destination's cache lines are neither read
// before they are written nor left in the cache; elsewhere, and for short
// ranges, it is the built-in copy.
//
// The built-in copy (REP MOVSQ on Intel hosts with fast strings) reads each
// destination line before writing it: a copy of b bytes into memory that
// is not in cache moves 3b through the host's memory, a streamed one 2b.
// Copies whose destination is read next (a staging buffer the DMA reads
// from the last-level cache) are better made through the cache: use copy.
package memcopy
