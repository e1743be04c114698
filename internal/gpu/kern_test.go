package gpu

import (
	"testing"

	"github.com/geoknn/geoknn/internal/kernels"
)

// The kernels' parameter types map onto the bindings' one for one, so an
// argument block checks its setters against the PTX's own list.
func TestCUDAParams(t *testing.T) {
	for _, p := range []kernels.Param{kernels.U32, kernels.U64, kernels.F32, kernels.F64} {
		if got := cudaParam(p); got.String() != p.String() {
			t.Errorf("cudaParam(%v) = %v", p, got)
		}
	}
}
