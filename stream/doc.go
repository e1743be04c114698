// Package stream is the contract between a source of points, a query and
// a sink of answers when they meet a chunk at a time: chunks of points in
// (Chunk, read by a ChunkReader), chunks of answers out (Answers, written
// by an AnswerWriter), in input order.
//
// It holds types only, no formats and no engines, so that every side
// imports it and none imports another: package geoknn's Index.Stream
// takes a ChunkReader and hands Answers to a sink; package pointio and
// its format packages implement ChunkReader and AnswerWriter for files;
// a caller may implement either for anything else (a socket, a channel,
// a table in memory). The name is the call site's: stream.Chunk,
// stream.ChunkReader, stream.Answers and stream.AnswerWriter say what
// they are where they are used.
//
// The rules every implementation keeps:
//
//   - A Chunk's columns are radians; its Base is the input's row of its
//     first point, so a chunk's row i is the input's row Base+i.
//   - A ChunkReader's chunks come in order without gaps; an error in the
//     input names the row in the whole input, and the chunks before it
//     are all there is.
//   - Answers for observations [Base, Base+N) go to an AnswerWriter in
//     order, each chunk the one after the last; whole answers are one
//     chunk. The bytes written do not depend on how the answers were cut
//     into chunks.
//   - An AnswerWriter is finished by Close, or released by Abort after an
//     error; a half-written output is never finished.
package stream
