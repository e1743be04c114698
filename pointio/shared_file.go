package pointio

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SharedOutput is an output file that several processes write at their
// offsets (an MPI job's ranks, on a filesystem all of them see), all or
// nothing, as WriteAt writes one: a temporary file beside the output,
// which the others open by its Temp name, renamed into place by Commit
// only when every process has written its part, removed by Remove
// otherwise.
type SharedOutput struct {
	// Path is the output; Temp the temporary file beside it.
	Path, Temp string
	perm       fs.FileMode
	dir        string
}

// CreateShared creates the temporary file of the regular file path (new,
// or replaced keeping its permissions).
func CreateShared(path string) (*SharedOutput, error) {
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path {
		path = target
	}
	dir, base, err := splitFilePath(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("write %s: not a regular file (%v): refusing to replace it", path, fi.Mode().Type())
	}
	perm := permToKeep(path)
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &SharedOutput{Path: path, Temp: f.Name(), perm: perm, dir: dir}, nil
}

// Commit puts the written file in place: the permissions of the file it
// replaces, a rename, the folder synced. Every process has synced its
// part before.
func (s *SharedOutput) Commit() error {
	if s.perm != 0 {
		if err := os.Chmod(s.Temp, s.perm); err != nil {
			return fmt.Errorf("write %s: %w", s.Path, err)
		}
	}
	if err := os.Rename(s.Temp, s.Path); err != nil {
		return fmt.Errorf("write %s: %w", s.Path, err)
	}
	syncDir(s.dir)
	return nil
}

// Remove removes the temporary file (a failed or stopped write).
func (s *SharedOutput) Remove() { os.Remove(s.Temp) }
