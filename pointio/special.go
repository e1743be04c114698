package pointio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// openStoppable is os.OpenFile that returns ctx's error once ctx is done,
// even while the open blocks: opening a FIFO waits for its other end, and
// a signal must stop a run waiting there within a second. A regular file
// is opened directly; for anything else the open runs on a goroutine of
// its own, which, if ctx ends first, closes what it opens later (or lives
// until the process ends, a moment after the signal).
func openStoppable(ctx context.Context, path string, flag int) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return os.OpenFile(path, flag, 0)
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	stop := make(chan struct{})
	go func() {
		f, err := os.OpenFile(path, flag, 0)
		select {
		case done <- opened{f, err}:
		case <-stop:
			if f != nil {
				f.Close()
			}
		}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		close(stop)
		// The open may have won the race: hand nothing back either way.
		select {
		case o := <-done:
			if o.f != nil {
				o.f.Close()
			}
		default:
		}
		return nil, ctx.Err()
	}
}

// sniffable reports whether path's first bytes can be read to guess its
// format and read again: only a regular file can. A FIFO, /dev/stdin or a
// <(...) pipe opened to sniff would lose those bytes (the first 10 once
// went to a Parquet and an Arrow sniff) and be opened twice, the second
// open waiting for a writer that has gone; such an input's format is
// guessed from what its one reader reads.
func sniffable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// stillReplaceable refuses, just before the rename that commits an
// output, a file made read-only while the run wrote (chmod 444 during a
// run): the check before any work saw it writable, and a rename ignores
// the file's own permissions, as cp and GDAL do not.
func stillReplaceable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("output %s was made read-only during the run: refusing to replace it", path)
	}
	return nil
}

// IsSpecial reports whether path names a FIFO, a character device or a
// socket (/dev/stdin, <(...), mkfifo): a file that can be read only once,
// front to back, and whose open can block until a writer comes. Missing
// files, folders and regular files are not special.
func IsSpecial(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// SpoolSpecial copies the special file at path (IsSpecial) to a new
// temporary file named *ext and returns its name, for formats read from
// their end or at random (Parquet, Arrow IPC): the open and every read
// end with ctx's error once ctx is done, so a signal stops a run that
// waits for a writer that never comes. Errors name path; the copy is
// removed if it fails.
func SpoolSpecial(ctx context.Context, path, ext string) (string, error) {
	f, err := OpenSpecial(ctx, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tmp, err := SpoolStdin(ctx, CancelReader(ctx, f), "", ext)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	return tmp, nil
}

// OpenSpecial opens the special file at path (IsSpecial) for reading
// once, as OpenStoppable does, with the readers' errors: ctx's once it
// is done, else one saying the points could not be read.
func OpenSpecial(ctx context.Context, path string) (*os.File, error) {
	f, err := openStoppable(ctx, path, os.O_RDONLY)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("read points: %w", err)
	}
	return f, nil
}

// OpenStoppable opens path for reading; where path is a FIFO or device,
// whose open waits for a writer, the wait ends with ctx's error once ctx
// is done.
func OpenStoppable(ctx context.Context, path string) (*os.File, error) {
	return openStoppable(ctx, path, os.O_RDONLY)
}

// StartsWith reports whether the file at path starts with magic (false
// when it cannot be read): how inputs without an extension are sniffed.
func StartsWith(path, magic string) bool {
	if !sniffable(path) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(magic))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == magic
}
