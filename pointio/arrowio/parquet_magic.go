package arrowio

import (
	"github.com/geoknn/geoknn/pointio"
)

// ParquetMagic starts (and ends) every Parquet file.
const ParquetMagic = "PAR1"

// IsParquet reports whether path names a Parquet file: by its extension
// (pointio.FormatByExt) or, with one that is not a text or NumPy
// format's (none, .dat), by its first bytes.
func IsParquet(path string) bool {
	if path == "-" {
		return false
	}
	switch pointio.FormatByExt(path) {
	case pointio.FormatParquet:
		return true
	case pointio.FormatCSV, pointio.FormatGeoJSON, pointio.FormatNPY, pointio.FormatNPZ:
		return false
	}
	return pointio.StartsWith(path, ParquetMagic)
}
