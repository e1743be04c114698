package arrowio

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// OpenReaderChunks reads points in chunks from r, standard input say
// (named "-" in errors): CSV (gzip-compressed or not), GeoJSON and .npy
// as a stream; Parquet (read from its footer), Arrow IPC and .npz
// through a temporary file in dir ("": os.TempDir()), removed on Close,
// as knn run reads standard input today.
func OpenReaderChunks(ctx context.Context, r io.Reader, opts pointio.ReadOptions, chunkRows int, dir string) (stream.ChunkReader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(8)
	ext := ""
	switch h := string(head); {
	case strings.HasPrefix(h, "PAR1"):
		ext = ".parquet"
	case strings.HasPrefix(h, ipcMagic):
		ext = ".arrow"
	case strings.HasPrefix(h, "\xff\xff\xff\xff"):
		ext = ".arrows"
	case strings.HasPrefix(h, "PK\x03\x04"):
		ext = ".npz"
	case strings.HasPrefix(h, "\x93NUMPY") && opts.IDColumn == "":
		return pointio.OpenNPYChunks(br, "-", opts.Radians, chunkRows)
	default:
		return pointio.OpenTextChunks(br, "-", opts, chunkRows), nil
	}
	tmp, err := pointio.SpoolStdin(ctx, br, dir, ext)
	if err != nil {
		return nil, err
	}
	c, err := OpenChunks(ctx, tmp, opts, chunkRows)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return spooled{c, tmp}, nil
}

// spooled is a chunk reader of a temporary file, removed on Close.
type spooled struct {
	stream.ChunkReader
	path string
}

func (s spooled) Close() error {
	err := s.ChunkReader.Close()
	os.Remove(s.path)
	return err
}
