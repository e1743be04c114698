package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/geoknn/geoknn/pointio"
)

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
