// Package numpyio reads points from NumPy .npy and .npz files and writes
// geoknn's answers, and points, in them, in the layouts numpy.load reads
// and numpy.save and numpy.savez write.
//
// # Reading
//
// A .npy array of shape (N, 2) holds a row per point, latitude then
// longitude, float64 or float32, in degrees (radians with
// pointio.ReadOptions.Radians); an .npz archive holds lat and lon arrays
// or one such (N, 2) array. ReadNPY and ReadNPZFile read them whole;
// ReadNPYRadians reads a C-order .npy file straight into radian columns,
// OpenNPYFile and OpenNPYChunks a chunk of rows at a time, and
// ReadNPYRadiansRows and OpenNPYChunksRange one process's share of the
// rows. Headers are checked against the file's or the archive's sizes
// before anything is allocated, members' CRC-32s are checked as NumPy
// checks them, and every coordinate is checked: the first problem is a
// *pointio.InputError naming the row.
//
// # Writing
//
// WriteResultsNPZ, WriteKResultsNPZ and WriteWithinNPZ write a query's
// answers whole as arrays that keep their shape (ref_index -1 and
// distance inf where an answer is missing); NewNPZAnswerWriter and
// NewNPZAnswerWriterAt write the same bytes a chunk at a time. Several
// processes write one archive together with NewNPZPartWriter, each at
// its arrays' offsets, and FinishNPZ writes the zip structure from every
// part's sums (CRCs combined, the file never read back). WriteNPZ writes
// typed columns, WritePointsNPZ and WritePointsNPY points.
//
// # Files
//
// npy.go (headers, whole arrays and archives), npy_radians.go and
// stream_npy.go (by rows), npy_range.go (a share of the rows), npz.go and
// answers_whole.go (whole answers), stream_npz.go, stream_npz_at.go and
// stream_npz_part.go (a chunk or a part at a time), crc_combine.go (the
// parts' CRCs), npz_verify.go and npz_file.go (archives read from disk),
// points_write.go (points).
package numpyio
