package formats

import (
	"fmt"
	"path/filepath"
	"strings"
)

// all is the registry: every format written, in the order messages name
// them. A new format is one entry here and one file for its writer.
var all = []*Format{&CSV, &NPZ, &Parquet, &Arrow, &NPY}

// ForAnswers is the format answers written to path take, by its
// extension (ignoring case; no extension and "-" are CSV). An extension
// no answer format has is refused before any work, so that the user
// learns that x.csv.gz would not be what its name says.
func ForAnswers(path string) (*Format, error) {
	f, ext := byExt(path)
	if f == nil || f.Answers == nil {
		return nil, fmt.Errorf("output %s: unknown format %q: name it %s", path, ext, extList(func(f *Format) bool { return f.Answers != nil }))
	}
	return f, nil
}

// Named is the answer format called name (--out-format).
func Named(name string) (*Format, error) {
	f := byName(name)
	if f == nil || f.Answers == nil {
		return nil, fmt.Errorf("--out-format %q: want %s", name, Names())
	}
	return f, nil
}

// ForPoints is the format points written to path take, by its
// extension as ForAnswers reads it.
func ForPoints(path string) (*Format, error) {
	f, ext := byExt(path)
	if f == nil || f.Points == nil {
		return nil, fmt.Errorf("output %s: unknown format %q: name it %s", path, ext, extList(func(f *Format) bool { return f.Points != nil }))
	}
	return f, nil
}

// Names lists the answer formats' names as usage lines give them: "csv,
// npz, parquet or arrow".
func Names() string {
	var names []string
	for _, f := range all {
		if f.Answers != nil {
			names = append(names, f.Name)
		}
	}
	return orList(names)
}

// byName is the format named name, or nil.
func byName(name string) *Format {
	for _, f := range all {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// byExt is the format path's extension chooses, or nil, and the
// extension.
func byExt(path string) (*Format, string) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" {
		return &CSV, ext
	}
	for _, f := range all {
		for _, e := range f.Exts {
			if e == ext {
				return f, ext
			}
		}
	}
	return nil, ext
}

// extList names the first extension of each format keep keeps.
func extList(keep func(f *Format) bool) string {
	var exts []string
	for _, f := range all {
		if keep(f) {
			exts = append(exts, f.Exts[0])
		}
	}
	return orList(exts)
}

// orList joins "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
