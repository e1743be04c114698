// Package pointio holds what geoknn's readers and writers of point and
// answer files share; each format family has a package of its own, named
// for what it reads and writes:
//
//   - pointio/csvio: CSV (and gzip-compressed CSV) points in, every CSV
//     answer table out.
//   - pointio/geojsonio: GeoJSON points in.
//   - pointio/numpyio: NumPy .npy and .npz points in, .npz answers out.
//   - pointio/arrowio: Parquet, GeoParquet and Arrow IPC, in and out.
//   - pointio/formats: the one registry that chooses among them, by an
//     input's extension or content and an output's extension or
//     --out-format. A caller that does not know its format asks it.
//
// # Reading
//
// Every reader returns the points in input order, so the index of a point
// is its row in the file, as orb.Point values ([longitude, latitude] in
// degrees) or as radian columns (AppendRadians, what the engines read).
// Every coordinate is checked: finite, latitude in [-90, 90], longitude in
// [-180, 180]. The first problem found stops reading and is returned as
// an *InputError, which locates it by line (CSV), feature (GeoJSON) or
// row (columnar files):
//
//	cities.csv:1234: latitude "95.2" out of range [-90, 90]
//	points.geojson: feature 17: longitude 181 out of range [-180, 180]
//
// Errors opening or reading a file wrap the *fs.PathError from package
// os. ReadOptions names the coordinate columns (LatLonColumns finds them
// as every reader does), the id column and whether arrays hold radians.
// A stream.ChunkReader hands a file out a chunk at a time
// (ReadWholeChunks for formats read whole, ChunkRange for an MPI rank's
// rows).
//
// # Writing
//
// Every output of a command goes through one guard. CheckOutputs, before
// any work, refuses an output that resolves (links, hard links,
// /dev/stdin, /dev/fd/N, /proc/self/fd/N) to an input or to standard
// input's file, a read-only file, an empty name, or another output. Write
// then streams to "-", devices and pipes and writes files through
// WriteAtomic: a temporary file renamed into place only once complete,
// removed on an error or when the context is done. WriteAll does the same
// for several files at once, all or none (Stage, Commit); SharedOutput is
// one file that several processes (an MPI job's ranks) write at their
// offsets, renamed into place only when all succeeded. WriteBlocks
// encodes a table's rows on every core and writes them in order, the
// writers' common engine.
//
// # Special files
//
// CancelReader makes a read of a quiet pipe return when the context is
// done, OpenStoppable an open of a FIFO with no writer; IsSpecial,
// SpoolSpecial and SpoolStdin let the formats read from their end
// (Parquet, Arrow, .npz) copy a pipe to a temporary file first.
//
// # Files
//
// errors.go (InputError), options.go and columns.go (what to read),
// radians.go and chunks.go (what readers hand on), output.go, stdout.go,
// write.go, stage.go, shared_file.go and stream_file.go (the output
// guard), blocks.go (the block encoder), special.go, cancel.go and
// spool.go (pipes and devices), writeback_*.go (asking Linux to write
// pages out early).
package pointio
