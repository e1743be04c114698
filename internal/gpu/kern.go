package gpu

import (
	"github.com/geoknn/geoknn/cuda"
	"github.com/geoknn/geoknn/internal/kernels"
)

// entry is one kernel of a module as its wrapper holds it: the function,
// and the argument block typed by the kernel's parameters (args nil: the
// entry shares the block of an earlier one with the same parameters).
type entry struct {
	name string
	fn   *cuda.Function
	args **cuda.Args
}

// loadEntries looks up every entry's function in mod and makes its
// argument block.
func loadEntries(drv *cuda.Driver, mod cuda.Module, entries []entry) error {
	for _, e := range entries {
		var err error
		if *e.fn, err = drv.ModuleGetFunction(mod, e.name); err != nil {
			return err
		}
		if e.args == nil {
			continue
		}
		sig, err := kernels.Signature(e.name)
		if err != nil {
			return err
		}
		*e.args = cuda.NewArgsOf(cudaParams(sig)...)
	}
	return nil
}

// cudaParams is sig in the bindings' terms.
func cudaParams(sig []kernels.Param) []cuda.Param {
	out := make([]cuda.Param, len(sig))
	for i, p := range sig {
		out[i] = cudaParam(p)
	}
	return out
}

// cudaParam is p in the bindings' terms (0, which no setter matches, for
// none).
func cudaParam(p kernels.Param) cuda.Param {
	switch p {
	case kernels.U32:
		return cuda.U32
	case kernels.U64:
		return cuda.U64
	case kernels.F32:
		return cuda.F32
	case kernels.F64:
		return cuda.F64
	}
	return 0
}
