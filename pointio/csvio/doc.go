// Package csvio reads points from CSV text and writes geoknn's answers,
// and points, as CSV.
//
// # Reading
//
// Read reads CSV (RFC 4180, as encoding/csv reads it) whose header names
// its latitude column ("lat" or "latitude") and its longitude column
// ("lon", "lng", "long" or "longitude"), in any case and any order; other
// columns, such as quoted names holding commas, quotes or any UTF-8, are
// ignored, and the delimiter (comma, semicolon, tab or bar) is read from
// the header:
//
//	lat,lon,iata,name
//	-6.081689834590001,145.391998291,GKA,"Goroka Airport"
//
// Every point is checked and the first problem is returned as a
// *pointio.InputError naming the line. A record is at most 1 MiB, so an
// input made of one endless line (a gzip bomb, a binary file named .csv)
// is refused after reading that much. ReadBuffered is the same reader
// for package pointio/formats, which chooses it by a file's name or
// content, decompresses gzip, and hands its blocks (parsed on every core,
// 32 MiB at a time) to a Sink so that a large file is never held whole.
//
// # Writing
//
// WriteResults, WriteKResults, WriteWithinCounts and WriteWithinLists
// write a query's answers whole, one row per answer in input order,
// distances in metres rounded to millimetres:
//
//	obs_index,ref_index,distance_m
//	0,17,1523.250
//
// NewAnswerWriter writes the same bytes a chunk at a time (a
// stream.AnswerWriter), however the answers are cut. NewAnswerPartWriter
// and NewRowsPartWriter write one process's rows of a file several write
// at offsets their lengths give; AnswersSize and NearestSize count those
// lengths before writing. WritePoints and WriteRows write points and
// typed rows (answers with identifiers).
//
// # Files
//
// csv.go, csv_chunks.go and csv_checks.go (reading), results.go and
// neighbours.go (whole answers), stream_write.go and stream_rows.go
// (answers and rows a chunk at a time), csv_size.go (parts' lengths),
// points_write.go (points and rows).
package csvio
