package arrowio

import "fmt"

// IPCMessage is one message of an Arrow IPC stream held in memory: its
// metadata flatbuffer and its body, both slices of the stream's bytes.
type IPCMessage struct{ Meta, Body []byte }

// IPCStreamMessages checks every metadata flatbuffer of the Arrow IPC
// stream held in b, as the file readers do before trusting arrow-go with
// a file (a crafted vector length makes arrow-go allocate without bound,
// which no recover catches), and splits it into its messages without
// copying: a server decodes a request's columns straight from the bytes
// it read them into. A message cut short is an error.
func IPCStreamMessages(b []byte) ([]IPCMessage, error) {
	var msgs []IPCMessage
	for offset := int64(0); offset < int64(len(b)); {
		m, next, err := streamMessage(b, offset)
		if err != nil {
			return nil, err
		}
		if next < 0 {
			return msgs, nil // end of stream
		}
		msgs = append(msgs, m)
		offset = next
	}
	return msgs, nil
}

// streamMessage checks the message at offset of the stream b and
// returns it and the offset that follows it (-1 at the end-of-stream
// marker).
func streamMessage(b []byte, offset int64) (IPCMessage, int64, error) {
	size := int64(len(b))
	if offset+8 > size {
		return IPCMessage{}, 0, fmt.Errorf("%w: the stream ends inside a message header at %d", errMetadata, offset)
	}
	skip, n := messageLength(b[offset : offset+8])
	if n == 0 {
		return IPCMessage{}, -1, nil
	}
	if n > size-offset-skip-4 {
		return IPCMessage{}, 0, fmt.Errorf("%w: message metadata of %d bytes at %d in a stream of %d", errMetadata, n, offset, size)
	}
	meta := fb(b[offset+skip+4 : offset+skip+4+n])
	if _, err := meta.message(); err != nil {
		return IPCMessage{}, 0, err
	}
	body, err := meta.bodyLength()
	if err != nil {
		return IPCMessage{}, 0, err
	}
	start := offset + skip + 4 + n
	if body < 0 || body > size-start {
		return IPCMessage{}, 0, fmt.Errorf("%w: a message body of %d bytes at %d in a stream of %d", errMetadata, body, start, size)
	}
	return IPCMessage{Meta: b[offset+skip+4 : start], Body: b[start : start+body]}, start + body, nil
}
