package engine

import "unsafe"

// What an engine may offer beyond queries. Each is a small interface the
// caller asserts on an Engine (never a concrete engine): an engine that
// lacks one does without, as the CPU engine does for all four.

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
