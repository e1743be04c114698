//go:build linux

package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The worker talks over one unix SOCK_SEQPACKET socket, its stdin: every
// message is one JSON object, kept whole by the socket (no framing), and
// the arrays travel beside it as memfd file descriptors (SCM_RIGHTS).
// Passing descriptors over the socket was chosen over the alternatives:
// /proc/<pid>/fd/N paths fail where /proc is mounted hidepid or the
// worker cannot see its parent's /proc entry, and /dev/shm names leak a
// file whenever a process dies between creating and unlinking one; a
// passed memfd has no name, and the kernel frees it when the last
// descriptor and mapping go, whichever side crashes.

// maxMessageBytes bounds one JSON message (requests are a few hundred
// bytes; a SEQPACKET message longer than the buffer is refused).
const maxMessageBytes = 64 << 10

// maxMessageFDs is the most descriptors a message may carry.
const maxMessageFDs = 4

// seqConn is the worker's end of the socket.
type seqConn struct{ fd int }

// message is one received message: its JSON and the descriptors that came
// with it (the receiver owns and closes them).
type message struct {
	body []byte
	fds  []int
}

// errClosed reports that the other end closed the socket.
var errClosed = errors.New("worker: the socket was closed")

// stdinConn checks that stdin is a SOCK_SEQPACKET unix socket.
func stdinConn() (*seqConn, error) {
	typ, err := unix.GetsockoptInt(0, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_SEQPACKET {
		return nil, ErrStdinNotSocket
	}
	return &seqConn{fd: 0}, nil
}

// recv reads the next message; errClosed at the end.
func (c *seqConn) recv() (message, error) {
	buf, oob := make([]byte, maxMessageBytes), make([]byte, unix.CmsgSpace(4*maxMessageFDs))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(c.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return message{}, fmt.Errorf("worker: reading a request: %w", err)
		}
		fds, ferr := parseRights(oob[:oobn])
		switch {
		case ferr != nil:
			return message{}, ferr
		case n == 0 && oobn == 0:
			return message{}, errClosed
		case flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
			closeAll(fds)
			return message{}, fmt.Errorf("worker: a request longer than %d bytes or %d descriptors", maxMessageBytes, maxMessageFDs)
		}
		return message{body: buf[:n], fds: fds}, nil
	}
}

// parseRights returns the descriptors of a control message.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("worker: control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("worker: control message: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// send writes v as one message, with fds (which stay the caller's).
func (c *seqConn) send(v any, fds ...int) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for {
		err = unix.Sendmsg(c.fd, body, oob, nil, 0)
		if err != unix.EINTR {
			return os.NewSyscallError("sendmsg", err)
		}
	}
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
