// Package formats is the one registry of the file formats geoknn reads
// and writes: an input's extension or content chooses its reader, an
// output's extension, or a name (--out-format), chooses a Format, and
// the Format holds every writer of that format. Every command asks it;
// none switches on a format itself, and no format package knows another.
//
// # Reading
//
// ReadPoints, ReadRadians and OpenChunks read any input: Parquet and
// Arrow IPC through package arrowio, NumPy through numpyio, GeoJSON
// through geojsonio and CSV through csvio. The extension decides,
// ignoring case (".csv" and ".txt" are CSV, ".geojson" and ".json"
// GeoJSON, ".npy" and ".npz" NumPy, ".parquet", ".arrow", ".feather" and
// the like arrowio's); for any other name the first bytes do: NumPy's and
// Parquet's magic, gzip (then the name without .gz), '{' for GeoJSON,
// else CSV. Content that is none of them (a zip archive, UTF-16, binary
// data) is named in the error rather than parsed. Standard input ("-")
// and pipes named without an extension are read by content once
// (ByContent): text and .npy as a stream, the formats read from their
// end copied to a temporary file first (magic.go lists them). ReadFile,
// ReadFileIDs and ReadFileRadians are ReadPoints and ReadRadians under
// older names; ReadReaderIDs and OpenTextChunks read text (and .npy) from
// an io.Reader. OpenChunksRange reads one MPI rank's rows.
//
// # Writing
//
// A Format writes a query's answers a chunk at a time (Answers, a
// stream.AnswerWriter; whole answers are one chunk, WriteWhole), answers
// that carry identifiers as rows of typed values (Rows), and points with
// their other columns (Points). WriteAnswers and WriteRows put the
// output in place all or nothing (pointio.Write): a file is renamed into
// place only once complete, standard output and pipes are streamed to.
// The bytes a format writes do not depend on how the answers were cut
// into chunks, so a streamed run and one held in memory write the same
// file; the tests of every writer's streamed, parted and whole output
// live here, beside that promise.
//
// The registry is a list (registry.go); a format is its entry there and
// its writer in its own package. ForAnswers and ForPoints refuse, before
// any work, an extension no format has (x.csv.gz), and Named a name no
// answer format has, with the choices in the message.
package formats
