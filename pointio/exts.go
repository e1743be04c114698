package pointio

import (
	"path/filepath"
	"strings"
)

// The names of the formats read but not written as answers.
const (
	FormatGeoJSON = "geojson"
	FormatNPY     = "npy"
)

// FormatByExt is the name of the format path's extension says, ignoring
// case ("" for none: no extension, or one no format has): the one table
// of input extensions, read by package formats and by arrowio's
// IsParquet and Handles. An output takes the first of its format's
// (formats.Format.Exts, which every output extension is one of).
func FormatByExt(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".txt":
		return FormatCSV
	case ".geojson", ".json":
		return FormatGeoJSON
	case ".parquet", ".geoparquet", ".parq":
		return FormatParquet
	case ".arrow", ".feather", ".ipc", ".arrows":
		return FormatArrow
	case ".npy":
		return FormatNPY
	case ".npz":
		return FormatNPZ
	}
	return ""
}
