package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/geoknn/geoknn"
)

// moduleVersion is the release this tree is: what knn version prints when
// the build knows no module version (a build from a clone says "(devel)"),
// and what the Python wheel is numbered (python/pyproject.toml;
// TestVersionMatchesWheel keeps the two equal).
const moduleVersion = "0.1.0"

// versionLine is "knn VERSION, commit C[ (modified)], GO OS/ARCH".
func versionLine() string {
	version, commit := moduleVersion, "unknown (built without version control)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = strings.TrimPrefix(v, "v")
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.modified":
				if s.Value == "true" {
					defer func() { commit += " (modified)" }()
				}
			}
		}
	}
	return fmt.Sprintf("knn %s, commit %s, %s %s/%s", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// cmdVersion prints the version and commit, the Go release, and whether
// GPUs are usable: the CUDA driver and how many GPUs it offers.
func cmdVersion(stdout io.Writer) error {
	line := versionLine()
	fmt.Fprintln(stdout, line)
	devs, driver, err := geoknn.ListDevices()
	switch {
	case errors.Is(err, geoknn.ErrNoDriver):
		fmt.Fprintln(stdout, "GPUs: none usable (no CUDA driver on this host): the CPU engine answers")
	case err != nil:
		fmt.Fprintf(stdout, "GPUs: none usable (CUDA driver: %v): the CPU engine answers\n", err)
	case len(devs) == 0:
		fmt.Fprintf(stdout, "GPUs: none (CUDA driver %d.%d): the CPU engine answers\n", driver/1000, driver%1000/10)
	default:
		fmt.Fprintf(stdout, "GPUs: %d usable (CUDA driver %d.%d): knn devices lists them\n", len(devs), driver/1000, driver%1000/10)
	}
	return nil
}
