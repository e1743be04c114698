package gpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/index"
	"github.com/geoknn/geoknn/internal/partition"
)

// A job's observations are checked on the device (valid.cu) once copied
// in, from the caller's page-locked columns or from the staging, where
// they are read anyway: checked on the host, every point would cross the
// host's memory a second time beside the GPUs' own reads of it (on two
// GPUs that check, not the copies, set the pace), and the staging copy
// would run in cache-sized blocks instead of streaming. Points written
// into managed memory are checked on the host; generated ones need none.

// queueCheck queues the check of the job's points, on the device columns
// after their copy in, and the copy of its verdict to the host.
func (s *slot) queueCheck(d *gpuDevice, obs index.Points) error {
	if err := d.drv.MemsetD8Async(s.firstBad.ptr, 0xff, 8, s.stream); err != nil {
		return err
	}
	if err := d.valid.run(d.drv, s.stream, obs.Len(), obs.Is32(), s.lat.ptr, s.lon.ptr, s.firstBad.ptr); err != nil {
		return err
	}
	return d.drv.MemcpyDtoHAsync(s.firstBadHost(), s.firstBad.ptr, 8, s.stream)
}

func (s *slot) firstBadHost() unsafe.Pointer { return unsafe.Add(s.hostSmall.p, 16) }

// checked is the verdict of the check of job, whose points are obs, once
// its stream is done: nil, or the error the host's check gives for the
// first invalid point (the job's answers are then refused).
func (s *slot) checked(obs index.Points, job partition.Job) error {
	bad := *(*uint64)(s.firstBadHost())
	if bad == math.MaxUint64 {
		return nil
	}
	if err := obs.CheckValues("observations", job.Start); err != nil {
		return engine.BadInput{Err: err}
	}
	// The columns changed since their copy in: name the point the device saw.
	return engine.BadInput{Err: fmt.Errorf("observations: point %d is not a valid latitude and longitude", job.Start+int(bad))}
}
