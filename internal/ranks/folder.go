package ranks

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Folder is an output of many files (knn simulate's step files) written
// into a temporary folder while the job runs, by rank 0 alone or by every
// rank (an Output a file, at a Path in it), and moved into place only
// once every file is done, so that a job stopped by an error or a signal
// leaves nothing it wrote. A new folder is the temporary one renamed; an
// existing one receives the files by hard link, which never replaces a
// file (the caller refuses, before any work, a folder that holds one of
// the names).
type Folder struct {
	final, tmp string
	what       string // names the folder in errors: the flag that gave it
	existed    bool
	names      []string // written into tmp, in order
}

// NewFolder makes the temporary folder for final: inside it when it
// exists (the same file system, for the links), else beside it. what
// names final in errors ("simulate: --out-dir").
func NewFolder(final, what string) (*Folder, error) {
	d := &Folder{final: final, what: what}
	parent, base := filepath.Dir(filepath.Clean(final)), "."+filepath.Base(filepath.Clean(final))
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		d.existed, parent, base = true, final, ".knn-steps"
	}
	for try := 0; ; try++ {
		// os.Mkdir rather than os.MkdirTemp: a new folder gets the
		// permissions the user's umask gives, not 0700.
		d.tmp = filepath.Join(parent, base+".tmp-"+strconv.FormatUint(rand.Uint64()%1e10, 10))
		err := os.Mkdir(d.tmp, 0o777)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, final, err)
		}
		return d, nil
	}
}

// Temp is the temporary folder, where every rank writes.
func (d *Folder) Temp() string { return d.tmp }

// Path is where file name is written meanwhile; Commit moves it.
func (d *Folder) Path(name string) string {
	d.names = append(d.names, name)
	return filepath.Join(d.tmp, name)
}

// Commit moves the files into place.
func (d *Folder) Commit() error {
	if !d.existed {
		if err := os.Rename(d.tmp, d.final); err != nil {
			return fmt.Errorf("%s %s: %w", d.what, d.final, err)
		}
		return nil
	}
	for k, name := range d.names {
		if err := os.Link(filepath.Join(d.tmp, name), filepath.Join(d.final, name)); err != nil {
			for _, done := range d.names[:k] {
				os.Remove(filepath.Join(d.final, done))
			}
			return fmt.Errorf("%s %s: %w", d.what, d.final, err)
		}
	}
	return os.RemoveAll(d.tmp)
}

// Discard removes the temporary folder and everything in it.
func (d *Folder) Discard() { os.RemoveAll(d.tmp) }
