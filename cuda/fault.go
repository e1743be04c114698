package cuda

import "sync/atomic"

// fault is a planned failure: the nth call of one driver function (by its
// C name, as errors name it) returns code instead of running.
type fault struct {
	op    string
	nth   int64
	code  Result
	calls atomic.Int64
}

func (f *fault) hit(op string) bool {
	return op == f.op && f.calls.Add(1) == f.nth
}

// InjectFault makes the nth call (from 1) of the driver function op, named
// as in errors ("cuMemAlloc_v2", "cuLaunchKernel"), fail with code without
// reaching the driver, so that tests can drive every error path of the
// code above on a real GPU. An empty op clears the plan. It is a testing
// aid: the plan is the Driver's own, and calls of other functions pass.
func (d *Driver) InjectFault(op string, nth int, code Result) {
	if op == "" {
		d.fault.Store(nil)
		return
	}
	d.fault.Store(&fault{op: op, nth: int64(nth), code: code})
}
