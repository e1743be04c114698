package pipeline

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testSlot is a chunk of the tests: its number and its answer.
type testSlot struct {
	chunk, answer int
	buf           []int // reused between chunks
}

// counter makes the stages of a run over n chunks that records what each
// stage saw.
type counter struct {
	n              int
	read, queried  int
	written        []int
	slots          atomic.Int32
	failRead       int // chunk whose read fails (-1: none)
	failQuery      int
	failWrite      int
	maxQueried     atomic.Int32
	queryDelay     time.Duration
	panicInQueryAt int
}

func newCounter(n int) *counter {
	return &counter{n: n, failRead: -1, failQuery: -1, failWrite: -1, panicInQueryAt: -1}
}

var errBad = errors.New("bad chunk")

func (c *counter) stages() Stages[testSlot] {
	return Stages[testSlot]{
		Read: func(ctx context.Context, s *testSlot) error {
			if c.read == c.n {
				return io.EOF
			}
			if c.read == c.failRead {
				return errBad
			}
			s.chunk, s.buf = c.read, append(s.buf[:0], c.read)
			c.read++
			return nil
		},
		Query: func(ctx context.Context, s *testSlot) error {
			time.Sleep(c.queryDelay)
			if s.chunk == c.panicInQueryAt {
				panic("query bug")
			}
			if s.chunk == c.failQuery {
				return errBad
			}
			c.maxQueried.Store(int32(s.chunk))
			s.answer = 2 * s.buf[0]
			c.queried++
			return nil
		},
		Write: func(ctx context.Context, s *testSlot) error {
			if s.chunk == c.failWrite {
				return errBad
			}
			c.written = append(c.written, s.answer)
			return nil
		},
	}
}

func (c *counter) newSlot() *testSlot { c.slots.Add(1); return &testSlot{} }

func TestRunInOrder(t *testing.T) {
	for _, depth := range []int{0, 1, 2, 3, 5} {
		c := newCounter(100)
		st, err := Run(context.Background(), depth, c.newSlot, c.stages())
		if err != nil || st.Chunks != 100 || len(c.written) != 100 {
			t.Fatalf("depth %d: %d chunks, %d written, %v", depth, st.Chunks, len(c.written), err)
		}
		for i, a := range c.written {
			if a != 2*i {
				t.Fatalf("depth %d: chunk %d written as %d", depth, i, a)
			}
		}
		if got := int(c.slots.Load()); got > max(depth, 1) {
			t.Errorf("depth %d: %d slots made", depth, got)
		}
	}
}

// A bad chunk stops the run: its error comes back, no chunk after it is
// queried or written.
func TestRunStopsAtFirstError(t *testing.T) {
	c := newCounter(2000)
	c.failRead = 1000
	_, err := Run(context.Background(), 3, c.newSlot, c.stages())
	if !errors.Is(err, errBad) || c.read != 1000 || c.maxQueried.Load() > 999 || len(c.written) > 1000 {
		t.Fatalf("read error: %v, %d read, last queried %d, %d written", err, c.read, c.maxQueried.Load(), len(c.written))
	}
	c = newCounter(2000)
	c.failQuery = 500
	_, err = Run(context.Background(), 3, c.newSlot, c.stages())
	if !errors.Is(err, errBad) || c.maxQueried.Load() != 499 || len(c.written) > 500 {
		t.Fatalf("query error: %v, last queried %d, %d written", err, c.maxQueried.Load(), len(c.written))
	}
	c = newCounter(2000)
	c.failWrite = 700
	_, err = Run(context.Background(), 3, c.newSlot, c.stages())
	if !errors.Is(err, errBad) || len(c.written) != 700 || c.read > 700+3 {
		t.Fatalf("write error: %v, %d written, %d read", err, len(c.written), c.read)
	}
}

func TestRunPanicIsError(t *testing.T) {
	c := newCounter(10)
	c.panicInQueryAt = 4
	_, err := Run(context.Background(), 3, c.newSlot, c.stages())
	if err == nil || !strings.Contains(err.Error(), "query stage") || len(c.written) > 4 {
		t.Fatalf("%v, %d written", err, len(c.written))
	}
}

// A context cancelled mid-run stops every stage with its error.
func TestRunCancelled(t *testing.T) {
	c := newCounter(1 << 30)
	c.queryDelay = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	done := make(chan error)
	go func() {
		_, err := Run(ctx, 3, c.newSlot, c.stages())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled run did not stop")
	}
}
