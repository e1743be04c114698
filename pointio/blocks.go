package pointio

import (
	"fmt"
	"io"
	"runtime"
	"sync"
)

// WriteBlocks encodes items [0, n) in blocks of block items on every core
// and writes them to w in order. While w takes one round of blocks (one a
// core), the cores encode the next, so a large output costs about the
// slower of the two rather than their sum; two rounds are in memory at
// most. encode appends the encoding of items [lo, hi) to dst.
func WriteBlocks(w io.Writer, n, block int, encode func(dst []byte, lo, hi int) ([]byte, error)) error {
	var r BlockRounds
	return r.Write(w, n, block, encode)
}

// BlockRounds are WriteBlocks's two rounds of buffers, kept by a streamed
// writer from one chunk to the next: fresh buffers for every chunk cost
// page faults and clearing on every core (2^27 answers to npz on 2 x
// H200: 5.1 of 22 CPU seconds went to allocating and clearing them).
type BlockRounds struct{ bufs [2][][]byte }

// Write is WriteBlocks into r's buffers, which are free again when it
// returns.
func (r *BlockRounds) Write(w io.Writer, n, block int, encode func(dst []byte, lo, hi int) ([]byte, error)) error {
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+block-1)/block))
	for k := range r.bufs {
		if len(r.bufs[k]) < workers {
			r.bufs[k] = append(r.bufs[k], make([][]byte, workers-len(r.bufs[k]))...)
		}
	}
	written := make(chan error, 1)
	writing := false
	for round, lo := 0, 0; lo < n; round, lo = round+1, lo+workers*block {
		bufs := r.bufs[round%2][:workers]
		errs := encodeRound(bufs, lo, n, block, encode)
		if writing {
			if err := <-written; err != nil {
				return err
			}
		}
		if err := firstError(errs); err != nil {
			return err
		}
		go func() { written <- writeAll(w, bufs) }()
		writing = true
	}
	if writing {
		return <-written
	}
	return nil
}

// encodeRound encodes one block a buffer, from item lo on, in parallel.
func encodeRound(bufs [][]byte, lo, n, block int, encode func(dst []byte, lo, hi int) ([]byte, error)) []error {
	errs := make([]error, len(bufs))
	var wg sync.WaitGroup
	for k := range bufs {
		b0, b1 := min(lo+k*block, n), min(lo+(k+1)*block, n)
		wg.Go(func() {
			// A bug in an encoder must not take the process down with a
			// temporary file left behind: it becomes this write's error.
			defer func() {
				if p := recover(); p != nil {
					errs[k] = fmt.Errorf("internal error encoding items %d to %d: %v", b0, b1, p)
				}
			}()
			bufs[k], errs[k] = encode(bufs[k][:0], b0, b1)
		})
	}
	wg.Wait()
	return errs
}

func writeAll(w io.Writer, bufs [][]byte) error {
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
