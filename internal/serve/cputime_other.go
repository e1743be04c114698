//go:build !unix

package serve

import "time"

// processCPU is unknown here: /metrics leaves it out.
func processCPU() (time.Duration, bool) { return 0, false }
