package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/cuda"
)

// cmdVersion prints the module's version and commit, the Go release, and
// the CUDA driver's version when one is loadable.
func cmdVersion(stdout io.Writer) error {
	version, commit := "(devel)", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					commit += " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(stdout, "knn %s, commit %s, %s %s/%s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	_, driver, err := geoknn.ListDevices()
	switch {
	case errors.Is(err, cuda.ErrNoDriver):
		fmt.Fprintln(stdout, "CUDA driver: none on this host (the CPU engine answers)")
	case err != nil:
		fmt.Fprintf(stdout, "CUDA driver: %v\n", err)
	default:
		fmt.Fprintf(stdout, "CUDA driver: %d.%d\n", driver/1000, driver%1000/10)
	}
	return nil
}
