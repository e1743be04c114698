package pointio

import (
	"fmt"
	"io"
	"runtime"
	"sync"
)

// writeBlocks encodes items [0, n) in blocks of block items on every core
// and writes them to w in order. While w takes one round of blocks (one a
// core), the cores encode the next, so a large output costs about the
// slower of the two rather than their sum; two rounds are in memory at
// most. encode appends the encoding of items [lo, hi) to dst.
func writeBlocks(w io.Writer, n, block int, encode func(dst []byte, lo, hi int) ([]byte, error)) error {
	workers := max(1, min(runtime.GOMAXPROCS(0), (n+block-1)/block))
	var rounds [2][][]byte
	for k := range rounds {
		rounds[k] = make([][]byte, workers)
	}
	written := make(chan error, 1)
	writing := false
	for r, lo := 0, 0; lo < n; r, lo = r+1, lo+workers*block {
		bufs := rounds[r%2]
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
