// Package pipeline runs chunks of work through three stages in order:
// read, query, write. While chunk i is queried, chunk i+1 is read and
// chunk i-1 written; a fixed number of chunk slots (the depth) go round,
// so the memory a run holds is set by the chunk size and the depth, not
// by the input's size. The stages run one chunk at a time each, in input
// order, so a writer sees the chunks in the order they were read.
//
// The first error of any stage stops the run: no chunk read after it is
// queried, the stages return, and Run returns that error. A context that
// is done stops every stage the same way, with the context's error.
//
// The stages are functions of a slot type the caller chooses (a chunk of
// points with its answer buffers, say), so the query can be any engine's
// call that fills the caller's buffers.
package pipeline
