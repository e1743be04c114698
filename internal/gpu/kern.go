package gpu

import "github.com/geoknn/geoknn/cuda"

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
		sig, err := signature(e.name)
		if err != nil {
			return err
		}
		*e.args = cuda.NewArgsOf(sig...)
	}
	return nil
}
