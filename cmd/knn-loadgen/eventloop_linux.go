package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The event loop is wrk's design: a few OS threads, each waiting in
// epoll on its share of the connections and answering whichever are
// ready, with blocking sockets (a request is written whole, a readable
// socket read once). A goroutine a connection instead costs, a request,
// a read that finds nothing, a park, the netpoller's wake-up and the
// scheduler's spinning threads: about as much CPU as the server's own
// work (2 cores, 64 clients: 11.5 CPU-us a request against the server's
// 14.6), taken from the cores the server shares with it.

const haveEventLoop = true

// loopConn is one connection of a loop.
type loopConn struct {
	fd      int
	buf     []byte // received, not yet parsed: buf[:n]
	n       int
	out     []byte // a pipeline's requests, written at once
	sent    time.Time
	pending int // responses still to read
	i       int // requests sent
}

// loopRun is what the loops share.
type loopRun struct {
	reqs     [][]byte
	inflight int
	deadline time.Time
	stop     atomic.Bool
	mu       sync.Mutex
	err      error
}

func (r *loopRun) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.stop.Store(true)
}

// runLoops sends reqs over clients connections to addr from threads
// event loops until the duration ends: requests answered, time, each
// pipeline's latency.
func runLoops(ctx context.Context, c config, addr string, reqs [][]byte) (int, time.Duration, []time.Duration, error) {
	threads := min(c.threads, c.clients)
	conns := make([]*loopConn, c.clients)
	defer func() {
		for _, cn := range conns {
			if cn != nil {
				_ = syscall.Close(cn.fd)
			}
		}
	}()
	for i := range conns {
		fd, err := dialBlocking(addr)
		if err != nil {
			return 0, 0, nil, err
		}
		conns[i] = &loopConn{fd: fd, buf: make([]byte, 64<<10), i: i * 7919}
	}
	run := &loopRun{reqs: reqs, inflight: c.inflight}
	stop := context.AfterFunc(ctx, func() { run.stop.Store(true) })
	defer stop()
	lats := make([][]time.Duration, threads)
	var wg sync.WaitGroup
	start := time.Now()
	run.deadline = start.Add(c.duration)
	for t := range threads {
		var mine []*loopConn
		for i := t; i < len(conns); i += threads {
			mine = append(mine, conns[i])
		}
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			lats[t] = run.loop(mine)
		})
	}
	wg.Wait()
	el := time.Since(start)
	if run.err != nil {
		return 0, 0, nil, run.err
	}
	var all []time.Duration
	for t := range threads {
		all = append(all, lats[t]...)
	}
	return len(all), el, all, nil
}

// loop answers its connections until the deadline: the latency of each
// pipeline completed.
func (r *loopRun) loop(conns []*loopConn) []time.Duration {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		r.fail(fmt.Errorf("epoll: %w", err))
		return nil
	}
	defer syscall.Close(ep)
	now := time.Now()
	for i, cn := range conns {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, cn.fd, &ev); err != nil {
			r.fail(fmt.Errorf("epoll: %w", err))
			return nil
		}
		if err := r.send(cn, now); err != nil {
			r.fail(err)
			return nil
		}
	}
	lats := make([]time.Duration, 0, 1<<16)
	events := make([]syscall.EpollEvent, len(conns))
	for !r.stop.Load() {
		n, err := syscall.EpollWait(ep, events, 10)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			r.fail(fmt.Errorf("epoll: %w", err))
			break
		}
		// One clock reading a wake-up: the answers it brings arrived
		// together.
		now := time.Now()
		if now.After(r.deadline) {
			break
		}
		for _, ev := range events[:max(n, 0)] {
			cn := conns[ev.Fd]
			done, err := r.receive(cn)
			if err == nil && done {
				lats = append(lats, now.Sub(cn.sent))
				err = r.send(cn, now)
			}
			if err != nil {
				r.fail(err)
				return lats
			}
		}
	}
	return lats
}

// send writes cn's next pipeline of requests.
func (r *loopRun) send(cn *loopConn, now time.Time) error {
	out := r.reqs[cn.i%len(r.reqs)]
	if r.inflight > 1 {
		cn.out = cn.out[:0]
		for j := range r.inflight {
			cn.out = append(cn.out, r.reqs[(cn.i+j)%len(r.reqs)]...)
		}
		out = cn.out
	}
	cn.i += r.inflight
	cn.sent, cn.pending = now, r.inflight
	for len(out) > 0 {
		w, err := syscall.Write(cn.fd, out)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return fmt.Errorf("write: %w", err)
		}
		out = out[w:]
	}
	return nil
}

// receive reads what cn has (once: the socket is readable) and parses the
// responses in it; true once the pipeline's last has come.
func (r *loopRun) receive(cn *loopConn) (bool, error) {
	if cn.n == len(cn.buf) {
		return false, errors.New("a response larger than 64 KiB")
	}
	n, err := syscall.Read(cn.fd, cn.buf[cn.n:])
	switch {
	case errors.Is(err, syscall.EINTR): // a blocking socket: no EAGAIN
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read: %w", err)
	case n == 0:
		return false, errors.New("the server closed the connection")
	}
	cn.n += n
	from := 0
	for cn.pending > 0 {
		size, err := parseResponse(cn.buf[from:cn.n])
		if err != nil || size == 0 {
			copy(cn.buf, cn.buf[from:cn.n])
			cn.n -= from
			return false, err
		}
		from += size
		cn.pending--
	}
	cn.n = copy(cn.buf, cn.buf[from:cn.n])
	return true, nil
}

// dialBlocking connects a blocking TCP socket (no delay) to addr.
func dialBlocking(addr string) (int, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return -1, err
	}
	var sa syscall.Sockaddr
	family := syscall.AF_INET
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa4 := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa4.Addr[:], ip4)
		sa = sa4
	} else {
		family = syscall.AF_INET6
		sa6 := &syscall.SockaddrInet6{Port: ta.Port}
		copy(sa6.Addr[:], ta.IP.To16())
		sa = sa6
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.Connect(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return -1, fmt.Errorf("connect %s: %w", addr, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}
