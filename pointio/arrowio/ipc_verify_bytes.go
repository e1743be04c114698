package arrowio

import (
	"encoding/binary"
	"fmt"
)

// VerifyIPCStream checks every metadata flatbuffer of the Arrow IPC stream
// held in b, as the file readers do before trusting arrow-go with a file:
// a crafted vector length makes arrow-go allocate without bound, which no
// recover catches. A server reads a request's stream into memory (its
// size bounded) and verifies it before decoding it.
func VerifyIPCStream(b []byte) error {
	size := int64(len(b))
	for offset := int64(0); offset < size; {
		if offset+8 > size {
			return nil // a short tail: the reader reports it
		}
		head := b[offset : offset+8]
		skip := int64(0)
		if binary.LittleEndian.Uint32(head) == 0xFFFFFFFF {
			skip, head = 4, head[4:]
		}
		n := int64(binary.LittleEndian.Uint32(head))
		if n == 0 {
			return nil // end of stream
		}
		if n > size-offset-skip-4 {
			return fmt.Errorf("%w: message metadata of %d bytes at %d in a stream of %d", errMetadata, n, offset, size)
		}
		meta := fb(b[offset+skip+4 : offset+skip+4+n])
		if _, err := meta.message(); err != nil {
			return err
		}
		body, err := meta.bodyLength()
		if err != nil {
			return err
		}
		if body < 0 || body > size {
			return fmt.Errorf("%w: a message body of %d bytes", errMetadata, body)
		}
		offset += skip + 4 + n + body
	}
	return nil
}

// IPCMessage is one message of an Arrow IPC stream held in memory: its
// metadata flatbuffer and its body, both slices of the stream's bytes.
type IPCMessage struct{ Meta, Body []byte }

// IPCStreamMessages verifies the stream in b as VerifyIPCStream does and
// splits it into its messages, without copying: a server decodes a
// request's columns straight from the bytes it read them into. A message
// cut short is an error here (VerifyIPCStream leaves it to the reader).
func IPCStreamMessages(b []byte) ([]IPCMessage, error) {
	var msgs []IPCMessage
	size := int64(len(b))
	for offset := int64(0); offset < size; {
		if offset+8 > size {
			return nil, fmt.Errorf("%w: the stream ends inside a message header at %d", errMetadata, offset)
		}
		head := b[offset : offset+8]
		skip := int64(0)
		if binary.LittleEndian.Uint32(head) == 0xFFFFFFFF {
			skip, head = 4, head[4:]
		}
		n := int64(binary.LittleEndian.Uint32(head))
		if n == 0 {
			return msgs, nil // end of stream
		}
		if n > size-offset-skip-4 {
			return nil, fmt.Errorf("%w: message metadata of %d bytes at %d in a stream of %d", errMetadata, n, offset, size)
		}
		meta := fb(b[offset+skip+4 : offset+skip+4+n])
		if _, err := meta.message(); err != nil {
			return nil, err
		}
		body, err := meta.bodyLength()
		if err != nil {
			return nil, err
		}
		start := offset + skip + 4 + n
		if body < 0 || body > size-start {
			return nil, fmt.Errorf("%w: a message body of %d bytes at %d in a stream of %d", errMetadata, body, start, size)
		}
		msgs = append(msgs, IPCMessage{Meta: b[offset+skip+4 : start], Body: b[start : start+body]})
		offset = start + body
	}
	return msgs, nil
}
