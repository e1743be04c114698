// Package worker serves the geoknn Python package: `knn worker` runs Serve
// in a child process of the Python interpreter, so that the wheel needs no
// cgo, a crash in the engine cannot take the interpreter down, and a fork
// of the interpreter cannot inherit GPU state.
//
// # Protocol
//
// Stdin is a unix SOCK_SEQPACKET socket, which keeps each message whole:
// one message is one JSON object (a request, or its reply), with any file
// descriptors it carries passed beside it (SCM_RIGHTS). Requests have an
// id and an op: "hello" (the reply names the worker's pid), "fit" (a
// reference set of n points), "query" (nearest, k nearest, radius counts
// or lists against a fitted set), "free" (drop a fitted set) and "cancel"
// (stop the request being answered, or any earlier one still queued).
// free and cancel get no reply; every other request gets one, ok or with
// an error kind: "value" (the caller's points or parameters; the row of
// the first bad point when known), "cancelled" or "runtime".
//
// The arrays themselves travel in memfd files mapped by both processes:
// the Python side writes points as radians, latitudes then longitudes
// from the next 64 KiB boundary; the worker writes answers into a memfd
// it sends back (or into the buffer the request brought) and describes
// their arrays in the reply, for the Python side to map as NumPy arrays.
// Each array crosses once and is never copied again. Mappings of the
// buffers the Python side reuses are cached, and on a GPU page-locked at
// their second use, so a repeated query costs no mapping or pinning.
//
// # Contract
//
// Answers are the root package's, exact as everywhere else (within 1 m,
// ties to the lowest index); the worker adds no arithmetic of its own.
// Requests are answered one at a time in order; a bad request gets an
// error reply and the worker lives on; Serve returns when the socket
// closes, after freeing every fitted set and mapping. Ctrl-C is left to
// the interpreter, which cancels by message. Serve runs on Linux alone
// (memfd, descriptor passing); elsewhere it returns an error.
package worker
