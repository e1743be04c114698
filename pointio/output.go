package pointio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckOutput checks, before any work, that path can take a command's
// output, so that a run never computes for minutes only to fail at the
// end: "-" (standard output), an existing character device, pipe or socket
// (streamed in place, or a link to one), an existing regular file, or a
// new file in an existing folder. A folder is refused, as is a read-only
// file, and a path that resolves (through symbolic links, hard links,
// /dev/stdin, /dev/fd/N or /proc/self/fd/N) to the same file as one of
// inputs ("-": standard input) or as standard input when that is a
// regular file or a pipe: an input is never overwritten.
func CheckOutput(path string, inputs ...string) error {
	if path == "" {
		return errors.New("output: an empty file name (use - for standard output)")
	}
	if IsStdout(path) {
		return checkStdout(path, inputs)
	}
	if _, _, err := splitFilePath(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return checkFolder(path)
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case fi.IsDir():
		return fmt.Errorf("output %s is a directory", path)
	}
	if in, ok := inputOf(fi, inputs); ok {
		return fmt.Errorf("output %s is the input %s: refusing to overwrite it", path, in)
	}
	if !fi.Mode().IsRegular() {
		return nil // streamed in place when written
	}
	// A file the user made read-only is not ours to replace (root too).
	if fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("output %s is read-only: refusing to replace it", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	f.Close()
	return checkFolder(path)
}

// CheckOutputs is CheckOutput for each of a command's outputs (empty ones
// skipped), which must moreover name different files.
func CheckOutputs(outputs, inputs []string) error {
	seen := map[string]string{}
	for _, out := range outputs {
		if out == "" {
			continue
		}
		if err := CheckOutput(out, inputs...); err != nil {
			return err
		}
		if IsStdout(out) {
			continue
		}
		key := resolvedPath(out)
		if other, ok := seen[key]; ok {
			return fmt.Errorf("outputs %s and %s name the same file", other, out)
		}
		seen[key] = out
	}
	return nil
}

// resolvedPath is the file path names once its links are followed (or,
// for a file still to be made, its folder's), for telling two outputs
// apart.
func resolvedPath(path string) string {
	path = danglingTarget(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(dir, filepath.Base(path))
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// danglingTarget is the file a chain of symbolic links ending nowhere
// (yet) names: a link to a file still to be made is that file, which an
// earlier output of the same command may make before this one is written
// through the link. Other paths come back unchanged.
func danglingTarget(path string) string {
	for range 40 { // the kernel's own limit on links followed
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path
		}
		if _, err := os.Stat(path); err == nil {
			return path // resolves: EvalSymlinks' to follow
		}
		target, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return path
}

// inputOf reports which of inputs fi is the same file as (device and
// inode), standard input included: named "-", or a regular file or a pipe
// on descriptor 0 whatever the inputs. A pipe because writing into one's
// own standard input's pipe holds its write end open: a read of it never
// ends, and once the pipe is full neither does the write.
func inputOf(fi fs.FileInfo, inputs []string) (string, bool) {
	if si, err := os.Stdin.Stat(); err == nil && (si.Mode().IsRegular() || si.Mode()&fs.ModeNamedPipe != 0) && os.SameFile(fi, si) {
		return "standard input", true
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if ii, err := os.Stat(in); err == nil && os.SameFile(fi, ii) {
			return in, true
		}
	}
	return "", false
}

// checkFolder checks that the folder a new file would go in exists.
func checkFolder(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("output %s: folder %s: %w", path, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output %s: %s is not a folder", path, dir)
	}
	// The answers go to a temporary file in the folder first: make sure one
	// can be made there before any work is done.
	probe, err := os.CreateTemp(dir, ".knn-probe-*")
	if err != nil {
		return fmt.Errorf("output %s: folder %s is not writable: %w", path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// Write writes a command's output to path through write, all or nothing
// for files: "-" streams to stdout; an existing character device, pipe or
// socket (/dev/null, /dev/stdout, a FIFO, or a link to one) is opened and
// streamed in place, never replaced; anything else goes through
// WriteAtomic, a symbolic link to a regular file writing its target. When
// ctx is done the writing stops, no file is left, and ctx's error comes
// back.
func Write(ctx context.Context, path string, stdout io.Writer, write func(w *bufio.Writer) error) error {
	cw := contextWrite(ctx, write)
	if IsStdout(path) {
		return streamTo(stdoutWriter(stdout), path, cw)
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return streamToFile(ctx, path, cw)
	}
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path {
		path = target
	}
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("output %s is read-only: refusing to replace it", path)
	}
	return writeAtomicFile(ctx, path, buffered(cw))
}

// streamToFile opens an existing device, pipe or socket and streams to it.
func streamToFile(ctx context.Context, path string, write func(w *bufio.Writer) error) error {
	f, err := openStoppable(ctx, path, os.O_WRONLY)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = streamTo(f, path, write)
	if cerr := f.Close(); err == nil && cerr != nil {
		return fmt.Errorf("write %s: %w", path, cerr)
	}
	return err
}

func streamTo(w io.Writer, path string, write func(w *bufio.Writer) error) error {
	bw := bufio.NewWriterSize(w, writeBufferSize)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CountingWriter counts the bytes written to it and keeps none: the
// length of an encoding that is written somewhere only once its length
// is known (an HTTP answer's Content-Length, an MPI rank's part).
type CountingWriter int64

func (c *CountingWriter) Write(p []byte) (int, error) {
	*c += CountingWriter(len(p))
	return len(p), nil
}

// ContextWriter returns a writer to w that fails every write once ctx is
// done, so that a long output stops within one buffer of a cancellation.
func ContextWriter(ctx context.Context, w io.Writer) io.Writer { return ctxWriter{ctx, w} }

// ctxWriter fails every write once its context is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}

// The names of the answer formats, as --out-format and reports give them
// (package formats holds the registry that maps extensions to them).
const (
	FormatCSV     = "csv"
	FormatNPZ     = "npz"
	FormatParquet = "parquet"
	FormatArrow   = "arrow"
)
