package arrowio

import (
	"time"

	"github.com/geoknn/geoknn/internal/cputime"
)

// processCPU is the CPU time the process has taken: on a shared machine,
// what a benchmark costs whatever else runs.
func processCPU() time.Duration {
	d, _ := cputime.Process()
	return d
}
