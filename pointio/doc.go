// Package pointio reads the observation and reference points of geoknn from
// CSV and GeoJSON files and writes nearest-neighbour results as CSV.
//
// # Reading points
//
// ReadFile picks the format from the file extension (".csv" and ".txt" are
// CSV, ".geojson" and ".json" are GeoJSON) or, for any other name, from the
// first non-blank byte of the file ('{' means GeoJSON). ReadCSV and
// ReadGeoJSON read from any io.Reader. All of them return the points in
// input order as orb.Point values, that is [longitude, latitude] in
// degrees, so the index of a point in the slice is its index in the file.
//
// A CSV file needs a header row naming its latitude column ("lat" or
// "latitude") and its longitude column ("lon", "lng", "long" or
// "longitude"), in any case and any order; other columns, such as quoted
// names holding commas, quotes or any UTF-8, are ignored:
//
//	lat,lon,iata,name
//	-6.081689834590001,145.391998291,GKA,"Goroka Airport"
//
// A GeoJSON file is a FeatureCollection whose features have Point or
// MultiPoint geometries, a single such Feature, or a bare Point or
// MultiPoint.
//
// # Validation and errors
//
// Every point is checked: coordinates must be finite decimal numbers, with
// latitude in [-90, 90] and longitude in [-180, 180]. The first problem
// found stops reading and is returned as an *InputError, which locates it
// by line for CSV and by feature (and MultiPoint position) index for
// GeoJSON:
//
//	cities.csv:1234: latitude "95.2" out of range [-90, 90]
//	points.geojson: feature 17: longitude 181 out of range [-180, 180]
//
// Missing or ambiguous header columns, CSV and JSON syntax errors,
// unsupported geometry types, empty files and files without points are
// InputErrors as well. Errors opening or reading a file wrap the
// *fs.PathError from package os.
//
// # Writing results
//
// Every output of a command goes through one guard. CheckOutputs, before
// any work, refuses an output that resolves (links, hard links,
// /dev/stdin, /dev/fd/N, /proc/self/fd/N) to an input or to standard
// input's file, a read-only file, an empty name, or another output. Write
// then streams to "-", devices and pipes and writes files through
// WriteAtomic: a temporary file renamed into place only once complete,
// removed on an error or when the context is done. WriteAll does the same
// for several files at once, all or none (Stage, Commit). CancelReader
// makes a read of a quiet pipe return when the context is done, and the
// readers bound what a crafted input can make them allocate (CSV records
// of 1 MiB, .npz members checked against the archive's directory).
//
// WriteResults writes the result table:
//
//	obs_index,ref_index,distance_m
//	0,17,1523.250
//
// with one row per observation, in input order, and distances in metres
// rounded to millimetres.
//
// # Streaming
//
// OpenChunks reads a file a chunk at a time (a stream.ChunkReader: CSV by
// blocks, .npy by row ranges; GeoJSON and .npz whole), with the checks
// and the errors of the whole-file readers; a stream.AnswerWriter
// (NewCSVAnswerWriter, NewNPZAnswerWriter, NewNPZAnswerWriterAt) writes
// a query's answers a chunk at a time in input order, the same bytes as
// the whole-answer writers. Package internal/pipeline joins them around
// a query with a bounded number of chunks in flight.
//
// # Parts
//
// Several processes (an MPI job's ranks) write one output together, each
// the answers of its range of observations: NewNPZPartWriter at the
// arrays' offsets in the shared file, with FinishNPZ's zip structure from
// every part's sums (CRCs combined, the file never read back);
// NewCSVAnswerPartWriter and NewCSVRowsPartWriter at offsets the parts'
// lengths give, which AnswersCSVSize counts before writing. SharedOutput
// is the file they write, renamed into place only when all succeeded.
// Package arrowio's ParquetPart does the same for Parquet.
//
// # Formats
//
// Package pointio/formats is the one registry of formats: it chooses a
// writer by an output's extension or a name (--out-format) and a reader
// by an input's extension or, for standard input and pipes, its content,
// across this package and arrowio. The streaming contract (Chunk,
// ChunkReader, Answers, AnswerWriter) is package stream's.
package pointio
