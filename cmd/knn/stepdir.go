package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/geoknn/geoknn/pointio"
)

// stepDir is where knn simulate writes its step files while it runs: a
// temporary folder, moved into --out-dir only once every step is done, so
// that a run stopped by an error or a signal leaves nothing it wrote. A new
// --out-dir is the temporary folder renamed; an existing one receives the
// files by hard link, which never replaces a file: a folder already holding
// any of the run's step names is refused before the first step (the user's
// only copy of an earlier run, a link onto an input, a read-only file).
type stepDir struct {
	final, tmp string
	existed    bool
	names      []string // written into tmp, in order
}

// checkStepDir refuses, before any work, an --out-dir that holds a file
// the run would write: step-N.format for N in 1..steps at digits digits.
func checkStepDir(dir, format string, steps, digits int, inputs ...string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("simulate: --out-dir %s: %w", dir, err)
	}
	for _, e := range entries {
		n, ok := stepNumber(e.Name(), format, digits)
		if !ok || n < 1 || n > steps {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := pointio.CheckOutput(path, inputs...); err != nil {
			return fmt.Errorf("simulate: --out-dir: %w", err)
		}
		return fmt.Errorf("simulate: --out-dir %s already holds %s: refusing to replace it (move it away, or name a new folder)", dir, e.Name())
	}
	return nil
}

// stepName is step n's file name.
func stepName(n, digits int, format string) string {
	return fmt.Sprintf("step-%0*d.%s", digits, n, format)
}

// stepNumber parses a name stepName would give.
func stepNumber(name, format string, digits int) (int, bool) {
	num, ok := strings.CutPrefix(name, "step-")
	if !ok {
		return 0, false
	}
	if num, ok = strings.CutSuffix(num, "."+format); !ok || len(num) < digits {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && stepName(n, digits, format) == name
}

// newStepDir makes the temporary folder for final: inside it when it
// exists (the same file system, for the links), else beside it.
func newStepDir(final string) (*stepDir, error) {
	d := &stepDir{final: final}
	parent, base := filepath.Dir(filepath.Clean(final)), "."+filepath.Base(filepath.Clean(final))
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		d.existed, parent, base = true, final, ".knn-steps"
	}
	for try := 0; ; try++ {
		// os.Mkdir rather than os.MkdirTemp: a new --out-dir gets the
		// permissions the user's umask gives, not 0700.
		d.tmp = filepath.Join(parent, base+".tmp-"+strconv.FormatUint(rand.Uint64()%1e10, 10))
		err := os.Mkdir(d.tmp, 0o777)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("simulate: --out-dir %s: %w", final, err)
		}
		return d, nil
	}
}

// path is where step file name is written meanwhile.
func (d *stepDir) path(name string) string {
	d.names = append(d.names, name)
	return filepath.Join(d.tmp, name)
}

// commit moves the step files into place.
func (d *stepDir) commit() error {
	if !d.existed {
		if err := os.Rename(d.tmp, d.final); err != nil {
			return fmt.Errorf("simulate: --out-dir %s: %w", d.final, err)
		}
		return nil
	}
	for k, name := range d.names {
		if err := os.Link(filepath.Join(d.tmp, name), filepath.Join(d.final, name)); err != nil {
			for _, done := range d.names[:k] {
				os.Remove(filepath.Join(d.final, done))
			}
			return fmt.Errorf("simulate: --out-dir %s: %w", d.final, err)
		}
	}
	return os.RemoveAll(d.tmp)
}

// discard removes the temporary folder and everything in it.
func (d *stepDir) discard() { os.RemoveAll(d.tmp) }
