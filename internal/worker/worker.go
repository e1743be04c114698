//go:build linux

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sync"
	"time"
	"unsafe"
)

// request is one message from the Python side. Ops: "hello", "fit" (n
// points in the descriptor sent), "free", "query" and "cancel".
type request struct {
	ID           int64   `json:"id"`
	Op           string  `json:"op"`
	N            int     `json:"n"`
	Engine       string  `json:"engine"`
	GPUs         int     `json:"gpus"`
	Index        int     `json:"index"`
	Kind         string  `json:"kind"` // nearest, knn, count, list
	K            int     `json:"k"`
	MaxMetres    float64 `json:"max_m"`
	RadiusMetres float64 `json:"radius_m"`
	Self         bool    `json:"self"`
	// Answer says the last descriptor is a buffer for the answer.
	Answer bool `json:"answer"`
	fds    []int
}

// reply answers one request (but free and cancel, which get none).
type reply struct {
	ID      int64       `json:"id"`
	OK      bool        `json:"ok"`
	Error   string      `json:"error,omitempty"`
	Kind    string      `json:"kind,omitempty"` // value, cancelled, runtime
	What    string      `json:"what,omitempty"`
	Row     *int        `json:"row,omitempty"`
	Index   int         `json:"index,omitempty"`
	Arrays  []arraySpec `json:"arrays,omitempty"`
	Engine  string      `json:"engine,omitempty"`
	Seconds float64     `json:"seconds,omitempty"`
	// EngineSeconds is the engine's part of Seconds (the Go API call).
	EngineSeconds float64 `json:"engine_seconds,omitempty"`
	// AnswerSeconds is the part spent writing the answer's arrays.
	AnswerSeconds float64 `json:"answer_seconds,omitempty"`
	// Pinned lists what the GPUs read or wrote in place, page-locked:
	// "points" (the reused query buffer), "answers" (the kept result).
	Pinned []string `json:"pinned,omitempty"`
	// PinSeconds is the part spent pinning buffers for the GPUs (a
	// buffer's second query), not counted in EngineSeconds.
	PinSeconds float64 `json:"pin_seconds,omitempty"`
	// PinError says why pinning failed (the query ran staged).
	PinError string `json:"pin_error,omitempty"`
	PID      int    `json:"pid,omitempty"`
}

// valueError is a request the caller got wrong: bad points (row is the
// first bad one, -1 if not known) or a bad parameter.
type valueError struct {
	err  error
	row  int
	what string
}

func (v valueError) Error() string { return v.err.Error() }
func (v valueError) Unwrap() error { return v.err }

func valuef(format string, args ...any) error {
	return valueError{err: fmt.Errorf(format, args...), row: -1}
}

// fitted is a reference set the worker keeps between queries.
type fitted struct {
	*workerIndex
	unmap func()
}

// worker serves one socket: a reader goroutine takes requests and cancels,
// the serving goroutine answers requests one at a time.
type worker struct {
	conn    *seqConn
	log     io.Writer
	indexes map[int]*fitted
	next    int
	maps    *mapCache // of the buffers the Python side reuses

	mu         sync.Mutex
	running    int64 // the request being answered
	cancel     context.CancelFunc
	lastCancel int64 // requests up to this id are cancelled
}

// Serve answers the requests of the geoknn Python package on stdin, a
// unix SOCK_SEQPACKET socket, until it closes; log takes the worker's
// diagnostics. It returns ErrStdinNotSocket when stdin is anything else.
func Serve(ctx context.Context, log io.Writer) error {
	conn, err := stdinConn()
	if err != nil {
		return err
	}
	// Ctrl-C at a terminal signals the whole foreground process group, the
	// worker with its Python interpreter: the interpreter cancels the query
	// by a message instead, and the worker lives on for the next one.
	signal.Ignore(os.Interrupt)
	return newWorker(conn, log).serve(ctx)
}

func newWorker(conn *seqConn, log io.Writer) *worker {
	w := &worker{conn: conn, log: log, indexes: map[int]*fitted{}, maps: &mapCache{max: 4}}
	w.maps.onDrop = w.unpinBuffer
	return w
}

// unpinBuffer undoes every index's page-locking of a cached buffer the
// worker is about to unmap.
func (w *worker) unpinBuffer(mem []byte) {
	for _, f := range w.indexes {
		f.unpinQuery(unsafe.Pointer(&mem[0]))
	}
}

// serve answers requests until the socket closes.
func (w *worker) serve(ctx context.Context) error {
	reqs := make(chan request, 64)
	readErr := make(chan error, 1)
	go func() { readErr <- w.read(reqs) }()
	for r := range reqs {
		w.handle(ctx, r)
	}
	for _, f := range w.indexes {
		f.close()
		f.unmap()
	}
	w.maps.close()
	if err := <-readErr; !errors.Is(err, errClosed) {
		return err
	}
	return nil
}

// read passes requests on and acts on cancels at once; at the end of the
// socket it cancels the running query and closes reqs.
func (w *worker) read(reqs chan<- request) error {
	defer close(reqs)
	for {
		m, err := w.conn.recv()
		if err != nil {
			w.cancelUpTo(math.MaxInt64)
			return err
		}
		var r request
		if err := json.Unmarshal(m.body, &r); err != nil {
			closeAll(m.fds)
			w.conn.send(reply{Kind: "runtime", Error: "worker: bad request: " + err.Error()})
			continue
		}
		r.fds = m.fds
		if r.Op == "cancel" {
			closeAll(r.fds)
			w.cancelUpTo(r.ID)
			continue
		}
		reqs <- r
	}
}

// cancelUpTo cancels the running request if its id is at most id, and the
// queued ones up to id.
func (w *worker) cancelUpTo(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastCancel = max(w.lastCancel, id)
	if w.cancel != nil && w.running <= id {
		w.cancel()
	}
}

// start registers r as running; false if it was cancelled already.
func (w *worker) start(r request, cancel context.CancelFunc) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running, w.cancel = r.ID, cancel
	return r.ID > w.lastCancel
}

func (w *worker) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running, w.cancel = 0, nil
}

// handle answers one request.
func (w *worker) handle(ctx context.Context, r request) {
	defer closeAll(r.fds)
	if r.Op == "free" {
		w.free(r.Index)
		return
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := time.Now()
	var rep reply
	var ans *answerFile
	var err error
	if w.start(r, cancel) {
		rep, ans, err = w.dispatch(qctx, r)
	} else {
		err = context.Canceled
	}
	w.done()
	if err != nil {
		rep = errorReply(err)
	}
	rep.ID, rep.OK, rep.Seconds = r.ID, err == nil, time.Since(t).Seconds()
	w.answer(rep, ans)
}

// answer sends rep with ans's descriptor, then closes it.
func (w *worker) answer(rep reply, ans *answerFile) {
	var fds []int
	if ans != nil {
		ans.unmap()
		defer ans.close()
		if ans.own {
			fds = []int{ans.fd}
		}
	}
	if err := w.conn.send(rep, fds...); err != nil {
		fmt.Fprintln(w.log, "knn worker:", err)
	}
}

func errorReply(err error) reply {
	var v valueError
	switch {
	case errors.As(err, &v):
		rep := reply{Kind: "value", Error: err.Error(), What: v.what}
		if v.row >= 0 {
			rep.Row = &v.row
		}
		return rep
	case errors.Is(err, context.Canceled):
		return reply{Kind: "cancelled", Error: "query cancelled"}
	}
	return reply{Kind: "runtime", Error: err.Error()}
}

// dispatch runs r by its op.
func (w *worker) dispatch(ctx context.Context, r request) (reply, *answerFile, error) {
	switch r.Op {
	case "hello":
		return reply{PID: os.Getpid()}, nil, nil
	case "fit":
		return w.fit(r)
	case "query":
		return w.query(ctx, r)
	}
	return reply{}, nil, valuef("worker: unknown op %q", r.Op)
}

// fit prepares the references sent and keeps them under a new handle.
func (w *worker) fit(r request) (reply, *answerFile, error) {
	if len(r.fds) != 1 || r.N < 1 {
		return reply{}, nil, valuef("worker: fit wants one descriptor and 1 or more points, got %d and %d", len(r.fds), r.N)
	}
	lat, lon, unmap, err := mapPoints(nil, r.fds[0], r.N)
	if err != nil {
		return reply{}, nil, err
	}
	x, err := newWorkerIndex(lat, lon, r.Engine, r.GPUs)
	if err != nil {
		unmap()
		return reply{}, nil, err
	}
	w.next++
	w.indexes[w.next] = &fitted{workerIndex: x, unmap: unmap}
	return reply{Index: w.next}, nil, nil
}

func (w *worker) free(h int) {
	if f, ok := w.indexes[h]; ok {
		f.close()
		f.unmap()
		delete(w.indexes, h)
	}
}
