package pointio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Staged is an output written in full but not yet in place: a command with
// several outputs stages them all, then commits them all, so that an error
// or a signal while writing any leaves none written (WriteAll).
type Staged struct {
	tmp, path string // "" tmp: streamed already, nothing to commit
}

// Stage writes path's content as Write does, except that a file is left
// in a temporary file beside it for Commit to rename into place. "-",
// devices and pipes are streamed at once (they cannot be staged).
func Stage(ctx context.Context, path string, stdout io.Writer, write func(w *bufio.Writer) error) (*Staged, error) {
	fi, err := os.Stat(path)
	if IsStdout(path) || (err == nil && !fi.Mode().IsRegular() && !fi.IsDir()) {
		return &Staged{}, Write(ctx, path, stdout, write)
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0 {
		return nil, fmt.Errorf("output %s is read-only: refusing to replace it", path)
	}
	dir, base, err := splitFilePath(path)
	if err != nil {
		return nil, err
	}
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	s := &Staged{tmp: f.Name(), path: path}
	if err := fillTemp(f, permToKeep(path), buffered(contextWrite(ctx, write))); err != nil {
		s.Discard()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return s, nil
}

// Commit renames the staged file into place.
func (s *Staged) Commit() error {
	if s.tmp == "" {
		return nil
	}
	if err := os.Rename(s.tmp, s.path); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	s.tmp = ""
	syncDir(filepath.Dir(s.path))
	return nil
}

// Discard removes the staged file, if it is still there.
func (s *Staged) Discard() {
	if s.tmp != "" {
		os.Remove(s.tmp)
		s.tmp = ""
	}
}

// Output is one of a command's outputs for WriteAll.
type Output struct {
	Path  string
	Write func(w *bufio.Writer) error
}

// WriteAll writes every output or, on an error or ctx done, none of the
// files: each is staged first, and only once all are staged are they
// renamed into place. (Streams, which cannot be staged, are written as
// their turn comes.)
func WriteAll(ctx context.Context, stdout io.Writer, outs []Output) error {
	var staged []*Staged
	discard := func() {
		for _, s := range staged {
			s.Discard()
		}
	}
	for _, o := range outs {
		s, err := Stage(ctx, o.Path, stdout, o.Write)
		if err != nil {
			discard()
			return err
		}
		staged = append(staged, s)
	}
	for k, s := range staged {
		if err := s.Commit(); err != nil {
			for _, rest := range staged[k+1:] {
				rest.Discard()
			}
			return err
		}
	}
	return nil
}

// contextWrite is write through a writer that fails once ctx is done, and
// ctx's error when it is.
func contextWrite(ctx context.Context, write func(w *bufio.Writer) error) func(w *bufio.Writer) error {
	return func(w *bufio.Writer) error {
		inner := bufio.NewWriterSize(ctxWriter{ctx, w}, writeBufferSize)
		err := write(inner)
		if err == nil {
			err = inner.Flush()
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return err
	}
}
