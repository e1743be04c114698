package cuda

import (
	"time"
	"unsafe"
)

// StreamCreate creates a stream in the current context.
func (d *Driver) StreamCreate(flags StreamFlags) (Stream, error) {
	var s Stream
	if err := d.call("cuStreamCreate", d.sym().streamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags)); err != nil {
		return 0, err
	}
	return s, nil
}

// StreamSynchronize blocks until all work queued on s has completed.
func (d *Driver) StreamSynchronize(s Stream) error {
	return d.call("cuStreamSynchronize", d.sym().streamSynchronize, uintptr(s))
}

// StreamDestroy destroys s once its queued work completes; it does not block.
func (d *Driver) StreamDestroy(s Stream) error {
	return d.call("cuStreamDestroy_v2", d.sym().streamDestroy, uintptr(s))
}

// StreamWaitEvent makes work queued on s after this call wait until e
// completes (the event as last recorded), without blocking the host.
func (d *Driver) StreamWaitEvent(s Stream, e Event) error {
	return d.call("cuStreamWaitEvent", d.sym().streamWaitEvent, uintptr(s), uintptr(e), 0)
}

// EventCreate creates an event in the current context. Use EventDefault for
// timing; EventDisableTiming makes cheaper events for synchronization only.
func (d *Driver) EventCreate(flags EventFlags) (Event, error) {
	var e Event
	if err := d.call("cuEventCreate", d.sym().eventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)); err != nil {
		return 0, err
	}
	return e, nil
}

// EventRecord enqueues e on s; e completes when s reaches it.
func (d *Driver) EventRecord(e Event, s Stream) error {
	return d.call("cuEventRecord", d.sym().eventRecord, uintptr(e), uintptr(s))
}

// EventSynchronize blocks until e has completed.
func (d *Driver) EventSynchronize(e Event) error {
	return d.call("cuEventSynchronize", d.sym().eventSynchronize, uintptr(e))
}

// EventElapsed returns the GPU time between two completed events. The
// driver measures milliseconds as a float32 with a resolution of about
// 0.5 µs; the result is that value converted to a time.Duration.
func (d *Driver) EventElapsed(start, end Event) (time.Duration, error) {
	op := "cuEventElapsedTime"
	if d != nil && d.elapsed != "" {
		op = d.elapsed
	}
	var ms float32
	if err := d.call(op, d.sym().eventElapsedTime,
		uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// EventDestroy destroys e.
func (d *Driver) EventDestroy(e Event) error {
	return d.call("cuEventDestroy_v2", d.sym().eventDestroy, uintptr(e))
}
