package geoknn

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/engines"
)

// StartSearcher is NewSearcher without the wait for the GPUs: with Engine
// Auto it returns at once with the CPU engine answering, and opens the
// GPUs behind it (loading the driver and opening a context a GPU takes
// 0.5-1 s on the hosts measured). Its queries move to the GPUs at the
// first call after they are ready, and a large nearest or k-nearest call
// moves between blocks of observations, so that a stream's first chunks
// are answered and written while the GPUs open instead of waiting for
// them. The engines rank the same float64 chords and report the same
// distances, bit for bit (the GPUs make the CPU's unit vectors and
// angles): nearest answers do not depend on where each block ran, and
// k-nearest and radius lists, whose equal distances both order by index,
// matched byte for byte in every file compared (2^24 x 2^16 and 2^25 x
// the cities, one H200). Engine is CPU until the GPUs are adopted;
// Opening and WaitOpened say when. Other engines, and the seed algorithm
// (GPUs only), open as NewSearcher opens them.
func StartSearcher(opts Options) (*Searcher, error) {
	if opts.Engine != Auto || opts.Algorithm == Seed {
		return NewSearcher(opts)
	}
	return startSearcher(opts, func() (engines.Opened, error) { return engines.Open(engineOptions(opts)) })
}

// startSearcher is StartSearcher with the engine opened by open.
func startSearcher(opts Options, open func() (engines.Opened, error)) (*Searcher, error) {
	onCPU := opts
	onCPU.Engine = CPU
	s, err := newSearcher(onCPU)
	if err != nil {
		return nil, err
	}
	s.opts = opts
	o := &opening{done: make(chan struct{})}
	go o.run(opts.Trace, open)
	s.opening = o
	return s, nil
}

// opening is an engine opening on a goroutine of its own; done is closed
// when it has opened or failed.
type opening struct {
	done   chan struct{}
	opened engines.Opened
	err    error
	took   time.Duration
}

func (o *opening) run(tr *Trace, open func() (engines.Opened, error)) {
	defer close(o.done)
	defer tr.Begin("host: engine", "engine start")()
	t := time.Now()
	o.opened, o.err = open()
	o.took = time.Since(t)
}

// ended reports whether o has opened or failed.
func (o *opening) ended() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// Opening reports whether the GPUs of a StartSearcher are still opening,
// its queries answered on the CPU meanwhile.
func (s *Searcher) Opening() bool {
	s.adopt()
	return s.opening != nil && !s.closed
}

// WaitOpened waits until the GPUs of a StartSearcher have opened (its
// queries run on them from then on) or failed to (they stay on the CPU,
// Fallback says why); it returns ctx's error if ctx ends first, and nil
// at once on any other searcher.
func (s *Searcher) WaitOpened(ctx context.Context) error {
	if o := s.opening; o != nil && !s.closed {
		select {
		case <-o.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.adopt()
	}
	return nil
}

// OpenTime is how long opening the engine took: NewSearcher's, or a
// StartSearcher's opening behind the CPU once it has ended (before that,
// its CPU engine's).
func (s *Searcher) OpenTime() time.Duration { return s.openTime }

// adopt moves s onto the engine opened behind it, once that has ended: the
// GPUs, or the CPU engine s already has if they could not open (with the
// reason in Fallback). Until then it does nothing.
func (s *Searcher) adopt() {
	o := s.opening
	if o == nil || !o.ended() {
		return
	}
	s.opening, s.openTime = nil, o.took
	switch {
	case o.err != nil:
		s.fallback = "GPU unusable: " + o.err.Error()
	case !o.opened.OnGPU:
		s.fallback = o.opened.Fallback
		o.opened.Engine.Close()
	default:
		s.stopWarm()
		s.eng.Close() // the CPU engine: lets go of the memory it kept
		s.eng, s.kind, s.fallback = o.opened.Engine, GPU, ""
		if n, k := s.expected[0], s.expected[1]; n > 0 {
			s.expect(int64(n), k)
		}
	}
}

// closeOpening waits for an engine still opening behind s and closes it.
func (s *Searcher) closeOpening() error {
	o := s.opening
	if o == nil {
		return nil
	}
	s.opening = nil
	<-o.done
	if o.err != nil {
		return nil // nothing opened
	}
	return o.opened.Engine.Close()
}

// openingRowsPerWorker sets the block the CPU answers at a time while the
// GPUs open: 2^16 observations a worker, a few milliseconds on every core
// (about 8 ms for 2^20 on 16 cores at 139 M observations/s), so that the
// GPUs, once ready, wait at most that long for a query to move to them.
const openingRowsPerWorker = 1 << 16

// countOpeningRows counts n observations a call answered on the CPU,
// when the GPUs were opening as it began (opening).
func (s *Searcher) countOpeningRows(opening bool, n int) {
	if opening {
		s.openingRows.Add(int64(n))
	}
}

// bridges reports whether a query of obs answers on the CPU a block at a
// time while the GPUs open: generated sets, made on the engine that
// answers them, and sets of one block answer in one call.
func (s *Searcher) bridges(obs Points) bool {
	return s.opening != nil && obs.cols.Gen == nil && obs.Len() > s.openingBlock()
}

// openingBlock is the observations the CPU answers at a time while the
// GPUs open.
func (s *Searcher) openingBlock() int {
	return openingRowsPerWorker * cmp.Or(max(s.opts.CPUWorkers, 0), runtime.GOMAXPROCS(0))
}

// planAhead plans, on a goroutine of its own, the GPUs' query of a sample
// of obs against s's prepared references while they open (once for each
// prepared set), so that the first call that moves to them finds its plan
// made.
func (s *Searcher) planAhead(obs, ref Points) {
	if s.prepared == nil || s.plannedFor == s.prepared {
		return
	}
	s.plannedFor = s.prepared
	go engines.PlanAhead(s.request(sampleOf(obs, planAheadSample), ref))
}

// planAheadSample is the observations planAhead copies: the plan walks
// 512 of them.
const planAheadSample = 4096

// sampleOf is at most n of obs's points, evenly spaced, copied: a sample
// that outlives the call obs came with.
func sampleOf(obs Points, n int) Points {
	m := min(n, obs.Len())
	lat, lon := make([]float64, m), make([]float64, m)
	for k := range m {
		lat[k], lon[k] = obs.At(k * obs.Len() / m)
	}
	return Radians64(lat, lon)
}

// bridged answers obs a block at a time on the CPU while s's GPUs open,
// and the rest in one call on the engine s has once they have (or on the
// CPU, if they could not): answer answers rows [lo, hi) of obs, asked as
// req, on s.eng. The engine's accounts are summed; the last block's
// engine names it.
func (s *Searcher) bridged(obs Points, answer func(lo, hi int, req engine.Request) (engine.Stats, error), ref Points) (Stats, error) {
	n := obs.Len()
	var st Stats
	for lo := 0; lo < n; {
		hi := n
		if s.opening != nil {
			hi = min(lo+s.openingBlock(), n)
		}
		opening := s.opening != nil
		bst, err := answer(lo, hi, s.blockRequest(obs, ref, lo, hi))
		if err != nil {
			return st, fmt.Errorf("geoknn: %w", err)
		}
		st = addStats(st, statsOf(bst))
		s.countOpeningRows(opening, hi-lo)
		lo = hi
		s.adopt()
	}
	return st, nil
}

// blockRequest is the request for rows [lo, hi) of obs, its progress
// counted in obs's rows.
func (s *Searcher) blockRequest(obs, ref Points, lo, hi int) engine.Request {
	req := s.request(obs.Slice(lo, hi), ref)
	if p := req.Progress; p != nil {
		n := obs.Len()
		req.Progress = func(done, _ int) { p(lo+done, n) }
	}
	return req
}
