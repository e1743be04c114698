package worker

import "errors"

// ErrStdinNotSocket reports that the worker was started by hand: only the
// geoknn Python package gives it the socket it serves.
var ErrStdinNotSocket = errors.New("worker: stdin must be a unix SOCK_SEQPACKET socket " +
	"(the geoknn Python package starts the worker with one)")
