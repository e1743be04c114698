package stream

import "context"

// Chunk is a run of consecutive points of an input, as the engine reads
// them: latitude and longitude columns in radians and, when asked for,
// the values of an identifier column.
type Chunk struct {
	// Base is the input's 0-based row (point) index of Lat[0].
	Base int64
	// Lat and Lon are in radians.
	Lat, Lon []float64
	// IDs holds the identifier column's values, nil when none is asked.
	IDs []string
}

// Len is the number of points in c.
func (c Chunk) Len() int { return len(c.Lat) }

// ChunkReader reads an input a chunk at a time, in order, each chunk
// checked as a whole-file reader checks the file: an error names the
// input and the row or line in the whole input, and the chunks before it
// are all there is.
type ChunkReader interface {
	// Next returns the next chunk, reusing dst's columns where they have
	// room, or io.EOF after the last one. The chunk is the caller's until
	// it hands it back as a later call's dst.
	Next(ctx context.Context, dst Chunk) (Chunk, error)
	// Rows is the number of points the input holds when its header or
	// metadata says so before reading (Parquet, Arrow files, .npy), else
	// -1.
	Rows() int64
	// Close releases the input and stops any reading ahead.
	Close() error
}
