package pointio

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
)

// WriteAt is Write for outputs written at offsets (NewNPZAnswerWriterAt):
// a regular file (new, or replaced) is written through a temporary file
// in its folder that write gets itself, synced and renamed into place
// only when write succeeds, removed otherwise, as WriteAtomic does;
// standard output ("-") and devices, pipes and sockets are streamed to
// through stream instead.
func WriteAt(ctx context.Context, path string, stdout io.Writer, write func(f *os.File) error, stream func(w *bufio.Writer) error) error {
	if fi, err := os.Stat(path); IsStdout(path) || (err == nil && !fi.Mode().IsRegular() && !fi.IsDir()) {
		return Write(ctx, path, stdout, stream)
	}
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path {
		path = target
	}
	return writeAtomicFile(ctx, path, write)
}
