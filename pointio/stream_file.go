package pointio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
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
	if fi, err := os.Stat(path); path == "-" || (err == nil && !fi.Mode().IsRegular() && !fi.IsDir()) {
		return Write(ctx, path, stdout, stream)
	}
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path {
		path = target
	}
	err := writeAtomicFile(path, func(f *os.File) error {
		if err := write(f); err != nil {
			return err
		}
		return ctx.Err()
	})
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

// writeAtomicFile is WriteAtomic handing write the temporary file.
func writeAtomicFile(path string, write func(f *os.File) error) error {
	dir, base, err := splitFilePath(path)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("write %s: not a regular file (%v): refusing to replace it", path, fi.Mode().Type())
	}
	perm := permToKeep(path)
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, renamed := f.Name(), false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
	}()
	if err := fillTempAt(f, perm, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	renamed = true
	syncDir(dir)
	return nil
}

// fillTempAt is fillTemp for a writer of the file itself.
func fillTempAt(f *os.File, perm fs.FileMode, write func(f *os.File) error) error {
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if perm != 0 {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	return f.Close()
}
