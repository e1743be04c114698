//go:build !linux

package numpyio

import "io"

// mappedFile is a shared mapping of an output file on Linux; elsewhere
// files are written with WriteAt.
type mappedFile struct{}

// mappingOS says whether outputs are mapped here.
const mappingOS = false

// mapFile maps nothing here: the caller writes with WriteAt.
func mapFile(io.WriterAt, int64) (*mappedFile, error) { return nil, nil }

func (*mappedFile) WriteAt([]byte, int64) (int, error) { return 0, nil }

func (*mappedFile) Close() error { return nil }
