package pointio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// writeBufferSize is the size of the buffer WriteAtomic hands to write.
const writeBufferSize = 256 << 10

// WriteAtomic writes the file at path through write, so that path holds
// either its previous content or the complete new content, never a partial
// file.
//
// The data goes to a temporary file named ".<base>.tmp-<random>" in the same
// folder as path, which is flushed, synced to stable storage and closed, and
// then renamed over path, but only if write and all of these steps succeed.
// On any error, or if write panics, the temporary file is removed and path is
// left untouched. After the rename the folder is synced as well, on a best
// effort basis.
//
// A new file gets the permissions os.Create would give it (0666 less the
// umask); a file that is replaced keeps its permission bits. If path is a
// symbolic link, the link itself is replaced (Write writes its target).
// Only regular files are replaced: a folder, device, pipe or socket at path
// is an error (Write streams to the latter).
func WriteAtomic(path string, write func(w *bufio.Writer) error) error {
	return writeAtomicFile(context.Background(), path, buffered(write))
}

// writeAtomicFile is WriteAtomic handing write the temporary file itself.
// ctx is checked once more after the file is synced, just before the
// rename that commits it: a run stopped before that point leaves nothing,
// and one that got as far as the rename has written its output whole.
func writeAtomicFile(ctx context.Context, path string, write func(f *os.File) error) error {
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
	// Deferred so that the temporary file goes even if write panics.
	tmp, renamed := f.Name(), false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
	}()
	if err := fillTemp(f, perm, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := stillReplaceable(path); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	renamed = true
	syncDir(dir)
	return nil
}

// buffered hands write a buffer over the file and flushes it.
func buffered(write func(w *bufio.Writer) error) func(f *os.File) error {
	return func(f *os.File) error {
		w := bufio.NewWriterSize(f, writeBufferSize)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
}

// splitFilePath splits path into its folder, "." if it has none, and its
// file name, and rejects paths that do not end in a file name.
func splitFilePath(path string) (dir, base string, err error) {
	dir, base = filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return "", "", fmt.Errorf("write %s: not a file name", path)
	}
	if dir == "" {
		dir = "."
	}
	return dir, base, nil
}

// permToKeep returns the permission bits of the regular file at path, so
// that replacing it keeps them, or 0 if there is no such file.
func permToKeep(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return 0
}

// fillTemp writes the new content into f through write, then sets its
// permissions to perm unless perm is 0, syncs it to stable storage and
// closes it. f is closed on return in every case, even if write panics.
func fillTemp(f *os.File, perm fs.FileMode, write func(f *os.File) error) error {
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
	}()
	stop := StartWriteback(f)
	defer stop() // also when write panics: before the deferred Close
	err := write(f)
	stop()
	if err != nil {
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
	// A failed Close must not be retried: the descriptor is gone.
	closed = true
	return f.Close()
}

// createTemp creates a new file named prefix followed by a random number in
// dir, like os.CreateTemp(dir, prefix+"*"), except that the file is created
// with permissions 0666 less the umask, as os.Create does, rather than 0600:
// it becomes the user's output file.
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64()%1e10, 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// syncDir syncs the folder dir so that a rename in it is durable. Errors are
// ignored: not every platform and file system supports syncing folders.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
