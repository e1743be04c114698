// Package formats is the one registry of the file formats geoknn writes:
// an output's extension, or a name (--out-format), chooses a Format, and
// the Format holds every writer of that format. Every command asks it;
// none switches on a format itself.
//
// A Format writes a query's answers a chunk at a time (Answers, a
// stream.AnswerWriter; whole answers are one chunk, WriteWhole), answers
// that carry identifiers as rows of typed values (Rows), and points with
// their other columns (Points). WriteAnswers and WriteRows put the
// output in place all or nothing (pointio.Write): a file is renamed into
// place only once complete, standard output and pipes are streamed to.
// The bytes a format writes do not depend on how the answers were cut
// into chunks, so a streamed run and one held in memory write the same
// file.
//
// The registry is a list (registry.go); a format is its entry there and
// its writer in its own package. ForAnswers and ForPoints refuse, before
// any work, an extension no format has (x.csv.gz), and Named a name no
// answer format has, with the choices in the message.
package formats
