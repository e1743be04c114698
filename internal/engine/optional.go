package engine

import (
	"context"
	"unsafe"
)

// What an engine may offer beyond queries. Each is a small interface the
// caller asserts on an Engine (never a concrete engine): an engine that
// lacks one does without, as the CPU engine does for all but Warmer.

// HostPinner is an engine that copies straight from and into page-locked
// host memory (the GPU engine): RegisterHost page-locks the caller's
// [p, p+bytes) until UnregisterHost, so that queries reading or writing
// it skip the staging copy. The memory must stay alive and unmoved (Go
// memory does) until then.
type HostPinner interface {
	RegisterHost(p unsafe.Pointer, bytes int) error
	UnregisterHost(p unsafe.Pointer) error
}

// ExitCloser is an engine with a faster close for a process about to exit:
// CloseAtExit makes every later call report it closed and leaves what it
// holds (GPU contexts, device and page-locked memory) to the process's
// exit, which reclaims it at once. Nothing the caller owns is touched.
type ExitCloser interface {
	CloseAtExit()
}

// KLimited is an engine whose KNearest answers k up to MaxK only and
// refuses more: the caller answers larger k elsewhere (engines.KNearest
// on the CPU engine), with the same answers.
type KLimited interface {
	MaxK() int
}

// Expecter is an engine that gets ready for many queries at once: Expect
// says that queries over n observations, k answers each, are coming (a
// stream of chunks, each too small to be worth every GPU alone), and the
// GPU engine starts opening the GPUs beyond the first.
type Expecter interface {
	Expect(n, k int)
}

// FreshNearest is an engine that makes a nearest query's answer arrays
// itself, beside the query's work: NearestFresh answers req into new
// arrays of req.Obs.Len() answers each and returns them. A new array is
// zeroed by the Go runtime on one thread and faults its pages in at its
// first write; the GPU engine does both while its first jobs run, so the
// plain call (no result to reuse) does not wait for them before it starts.
type FreshNearest interface {
	NearestFresh(ctx context.Context, req Request) (Result, Stats, error)
}

// Warmer is an engine that can build, before its first large nearest
// query on prepared references, what that query would build and keep for
// the later ones (the CPU engine's face cells): Warm builds it for
// req.Prepared and returns when it has, or at ctx's end. The query waits
// for a Warm in progress rather than building twice.
type Warmer interface {
	Warm(ctx context.Context, req Request) error
}
