package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/geoknn/geoknn/internal/count"

	"github.com/geoknn/geoknn/internal/sysmem"
)

// resolveArg says what --obs or --ref names: a file (a path with a folder
// in it, or any other name that is not a count) or a count of synthetic
// points. A bare name that is both a count and a file in this folder is
// refused rather than guessed: "./1000" names the file, "1e3" the count.
func resolveArg(flagName, arg string) (n int, isFile bool, err error) {
	if arg == "" {
		return 0, false, usagef("%s is required", flagName)
	}
	if arg == "-" {
		return 0, true, nil // standard input
	}
	if strings.ContainsRune(arg, os.PathSeparator) || strings.ContainsRune(arg, '/') {
		return 0, true, nil
	}
	n, cerr := count.Parse(arg)
	_, serr := os.Stat(arg)
	switch {
	case cerr == nil && serr == nil:
		return 0, false, usagef("%s %s: both a count and a file in this folder: write ./%s for the file", flagName, arg, arg)
	case cerr == nil:
		return n, false, nil
	case serr == nil:
		return 0, true, nil
	}
	return 0, false, fmt.Errorf("%s %q: no such file, and not a count such as 2^20 or 1e6", flagName, arg)
}

// Limits of a query: reference indices are 32-bit (and the kernels' counts
// 31-bit), and observations number at most 2^40.
const (
	maxReferences   = 1<<31 - 1
	maxObservations = 1 << 40
)

// checkCount refuses a count beyond the engine's limit or beyond the memory
// this host has available for bytesPer bytes a point, before anything is
// allocated.
func checkCount(flagName string, n, limit, bytesPer int) error {
	if n > limit {
		return usagef("%s %d: more than the %d points a query takes", flagName, n, limit)
	}
	need := uint64(n) * uint64(bytesPer)
	if avail, ok := sysmem.Available(); ok && need > avail {
		return fmt.Errorf("%s %d: %s of memory needed (%d bytes a point), %s available on this host",
			flagName, n, bytesText(need), bytesPer, bytesText(avail))
	}
	return nil
}

// bytesText writes a byte count in binary units: "8.0 TiB".
func bytesText(b uint64) string {
	v, units := float64(b), []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	k := 0
	for v >= 1024 && k < len(units)-1 {
		v /= 1024
		k++
	}
	return fmt.Sprintf("%.1f %s", v, units[k])
}

// isCount reports whether arg reads as a count of synthetic points.
func isCount(arg string) bool {
	_, err := count.Parse(arg)
	return err == nil
}
