// Package arrowio reads points from Parquet, GeoParquet and Arrow IPC
// (Feather) files and writes query answers in those formats, through
// github.com/apache/arrow-go (pure Go). It is a package of its own, as
// csvio, geojsonio and numpyio are, so that programs that read only text
// do not carry the Arrow and Parquet libraries.
//
// Reading keeps pointio's contract: the points in input order, every
// coordinate checked, and the first problem returned as a
// *pointio.InputError naming the file and the row. A file's metadata (row
// counts, message lengths) is checked against its size before anything
// is allocated, and a corrupt file is an error, never a panic. OpenChunks
// and OpenChunksRange read a file Handles reports a stream.ChunkReader at
// a time (a Parquet row group, a window of Arrow batches); a pipe or
// device is copied to a temporary file first, since both formats are
// read from their end, and errors name the input, never the copy.
// Package pointio/formats reads standard input and the other formats.
//
// Writing keeps package stream's contract: NewAnswerWriter and
// NewRowsWriter take answers a chunk at a time and write the same bytes
// as WriteResults, WriteKResults, WriteWithin and WriteRows write them
// whole, batches of GroupItems observations encoded on every core and
// written in order. ParquetPart writes one MPI rank's row groups of a
// shared file, FinishParquet its footer from every rank's metadata.
// Package pointio/formats chooses these writers by an output's name.
package arrowio
