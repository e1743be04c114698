package numpyio

import (
	"fmt"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// OpenNPYChunksRange reads rows [lo, hi) of the C-order (N, 2) .npy file
// at path in chunks, seeking to row lo: errors name the row in the whole
// file, as ReadNPYRadiansRows's do.
func OpenNPYChunksRange(path string, radians bool, chunkRows, lo, hi int) (stream.ChunkReader, error) {
	if chunkRows <= 0 {
		chunkRows = pointio.DefaultChunkRows
	}
	nf, ok, err := openNPYPoints(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, npyError(path, fmt.Errorf("not read by rows: Fortran order"))
	}
	if lo < 0 || hi < lo || hi > nf.n {
		nf.f.Close()
		return nil, npyError(path, fmt.Errorf("rows [%d, %d) of %d", lo, hi, nf.n))
	}
	return &npyChunks{file: &npyFileRows{f: nf.f, data: nf.data}, closer: nf.f, name: path, npyValues: nf.npyValues,
		rule: newNPYRule(radians), n: hi, at: lo, first: lo, rows: chunkRows}, nil
}
