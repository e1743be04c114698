package pointio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
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

// ResultsHeader is the header line WriteResults writes, without the
// trailing newline.
const ResultsHeader = "obs_index,ref_index,distance_m"

// WriteResults writes the nearest-neighbour results for n observations as
// CSV to w and flushes it. The output is the header line ResultsHeader
// followed by one line per observation in input order: the 0-based
// observation index, the 0-based index of its nearest reference point, and
// the great-circle distance between them in metres with three decimals
// (millimetres), rounded to nearest as strconv.FormatFloat(m, 'f', 3, 64)
// does. Lines end in "\n". For example:
//
//	obs_index,ref_index,distance_m
//	0,17,1523.250
//	1,3,0.000
//
// row(i) returns the result for observation i; it is called once per
// observation, from several goroutines at once for large n (rows are
// formatted in parallel blocks and written in order), so it must be safe for
// concurrent use, as reading from result slices is. A distance that is
// negative, NaN or infinite is an error, as is any error writing to w.
func WriteResults(w *bufio.Writer, n int, row func(i int) (ref uint32, metres float64)) error {
	if n < 0 {
		return fmt.Errorf("write results: negative row count %d", n)
	}
	if _, err := w.WriteString(ResultsHeader + "\n"); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	// Formatting costs about 50 ns a row, seconds for 2^27 rows, so blocks
	// of rows are formatted on every core, ahead of the writes.
	err := writeBlocks(w, n, 1<<16, func(dst []byte, lo, hi int) ([]byte, error) { return appendRows(dst, lo, hi, row) })
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// appendRows appends the CSV lines of observations [lo, hi) to dst.
func appendRows(dst []byte, lo, hi int, row func(i int) (ref uint32, metres float64)) ([]byte, error) {
	var line [rowBufferSize]byte
	for i := lo; i < hi; i++ {
		ref, m := row(i)
		if !(m >= 0) || math.IsInf(m, 1) {
			return dst, fmt.Errorf("write results: observation %d: invalid distance %v m", i, m)
		}
		mm, ok := millimetres(m)
		if !ok {
			dst = appendRowFloat(dst, i, ref, m)
			continue
		}
		// The usual row is formatted right to left into line, here rather
		// than in a function of its own: a call per row costs 2-3%.
		end := len(line) - 5
		frac := mm % 1000
		line[end] = '.'
		line[end+1] = byte('0' + frac/100)
		line[end+2] = byte('0' + frac/10%10)
		line[end+3] = byte('0' + frac%10)
		line[end+4] = '\n'
		end = putUint(&line, end, mm/1000)
		end--
		line[end] = ','
		end = putUint(&line, end, uint64(ref))
		end--
		line[end] = ','
		end = putUint(&line, end, uint64(i))
		dst = append(dst, line[end:]...)
	}
	return dst, nil
}

// rowBufferSize is large enough for any row appendRows formats in line: an
// index of up to 19 digits, a reference of up to 10 and a distance below
// 1e12 m (13 digits with the point, 3 decimals), 3 separators.
const rowBufferSize = 64

// appendRowFloat appends the CSV line of observation i, whose nearest
// reference ref is m metres away, to dst, for the distances millimetres
// cannot round.
func appendRowFloat(dst []byte, i int, ref uint32, m float64) []byte {
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, ',')
	dst = strconv.AppendUint(dst, uint64(ref), 10)
	dst = append(dst, ',')
	dst = appendMetres(dst, m)
	return append(dst, '\n')
}

// appendMetres appends m >= 0 with exactly three decimals, giving the same
// bytes as strconv.AppendFloat(dst, m, 'f', 3, 64) (except that negative
// zero is written as "0.000") but several times faster in the common case.
func appendMetres(dst []byte, m float64) []byte {
	if mm, ok := millimetres(m); ok {
		dst = strconv.AppendUint(dst, mm/1000, 10)
		frac := mm % 1000
		return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	}
	return strconv.AppendFloat(dst, m, 'f', 3, 64)
}

// millimetres returns m >= 0 rounded to the nearest multiple of 0.001 (ties
// to even, as strconv rounds the exact binary value), in units of 0.001. It
// returns false where it cannot prove the result correct cheaply: values of
// 1e12 and more, and values within rounding error of a tie.
//
// It rounds m*1000 to an integer mm, and uses a fused multiply-add to
// compute the residual m*1000 - mm with a single rounding. Rounding is
// monotonic and ±0.5 is representable, so a computed residual strictly
// inside (-0.5, 0.5) proves that the exact residual is too, that is, mm is
// the correctly rounded result.
func millimetres(m float64) (uint64, bool) {
	if !(m < 1e12) {
		return 0, false
	}
	mmf := math.Round(m * 1000)
	if r := math.FMA(m, 1000, -mmf); r > -0.5 && r < 0.5 {
		return uint64(mmf), true
	}
	return 0, false
}

// digitPairs holds the two-digit decimal strings "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// putUint writes the decimal digits of v into b, ending just before b[end],
// and returns the index of the first digit. b must have room for them.
func putUint(b *[rowBufferSize]byte, end int, v uint64) int {
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		end -= 2
		b[end] = digitPairs[r]
		b[end+1] = digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		end -= 2
		b[end] = digitPairs[v*2]
		b[end+1] = digitPairs[v*2+1]
		return end
	}
	end--
	b[end] = byte('0' + v)
	return end
}
