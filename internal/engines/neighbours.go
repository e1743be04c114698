package engines

import (
	"context"
	"fmt"

	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
)

// KNearest answers req's out.K nearest on eng, or, where out.K is above
// eng's limit (engine.KLimited: the GPU kernels'), on the CPU engine with
// every core, which gives the same answers; the note says so.
func KNearest(ctx context.Context, eng engine.Engine, req engine.Request, maxRad float64, out engine.KResult) (engine.Stats, error) {
	l, ok := eng.(engine.KLimited)
	if !ok || out.K <= l.MaxK() {
		return eng.KNearest(ctx, req, maxRad, out)
	}
	st, err := cpu.NewCPU(0).KNearest(ctx, req, maxRad, out)
	st.Note += fmt.Sprintf("; on the CPU: the GPU kernels answer k up to %d", l.MaxK())
	return st, err
}
