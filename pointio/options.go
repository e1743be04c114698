package pointio

// ReadOptions adjust how files are read.
type ReadOptions struct {
	// LatColumn and LonColumn name the coordinate columns (matched
	// case-insensitively) in files that have columns of those names, such
	// as "pickup_latitude"; files without them are read by the usual
	// names ("lat", "latitude", "lon", "lng", "long", "longitude").
	LatColumn, LonColumn string
	// Radians says NumPy arrays hold radians, not degrees.
	Radians bool
	// IDColumn names a column whose values the readers return beside the
	// points (CSV, Parquet and Arrow inputs), to carry into the answers.
	IDColumn string
}
