package arrowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// arrow-go trusts the flatbuffers of an IPC file's metadata: a crafted
// vector length (of schema fields, say) makes it allocate without bound,
// which no recover catches. verifyIPC walks every metadata flatbuffer of
// the file first and checks that each vector the reader sizes an
// allocation by fits in its buffer (slots as Arrow's Schema.fbs,
// Message.fbs and File.fbs number them).

// maxFieldDepth bounds nested fields (a list of structs of lists...).
const maxFieldDepth = 64

var errMetadata = errors.New("corrupt Arrow IPC metadata")

// fb is one flatbuffer.
type fb []byte

func (b fb) u32(at int) (int, error) {
	if at < 0 || at+4 > len(b) {
		return 0, errMetadata
	}
	return int(binary.LittleEndian.Uint32(b[at:])), nil
}

// root is the position of the root table.
func (b fb) root() (int, error) { return b.u32(0) }

// field is the absolute position of slot s of the table at pos (0: absent).
func (b fb) field(pos, s int) (int, error) {
	if pos < 0 || pos+4 > len(b) {
		return 0, errMetadata
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	if vt < 0 || vt+4 > len(b) {
		return 0, errMetadata
	}
	// As flatbuffers reads it: a slot is present when its offset in the
	// vtable is below the vtable's size (an odd size included), and a
	// present slot past the buffer is corrupt, not absent. Read otherwise,
	// a flipped size made the verifier pass what arrow-go then read as a
	// 64 GB body.
	size := int(binary.LittleEndian.Uint16(b[vt:]))
	at := vt + 4 + 2*s
	if 4+2*s >= size {
		return 0, nil
	}
	if at+2 > len(b) {
		return 0, errMetadata
	}
	off := int(binary.LittleEndian.Uint16(b[at:]))
	if off == 0 {
		return 0, nil
	}
	return pos + off, nil
}

// ref follows the offset in slot s of the table at pos (0: absent).
func (b fb) ref(pos, s int) (int, error) {
	at, err := b.field(pos, s)
	if err != nil || at == 0 {
		return 0, err
	}
	off, err := b.u32(at)
	if err != nil {
		return 0, err
	}
	return at + off, nil
}

// vector is slot s's vector of elements of elem bytes: its first
// element's position and its length, checked to fit.
func (b fb) vector(pos, s, elem int) (start, n int, err error) {
	at, err := b.ref(pos, s)
	if err != nil || at == 0 {
		return 0, 0, err
	}
	if n, err = b.u32(at); err != nil {
		return 0, 0, err
	}
	if uint64(n)*uint64(elem) > uint64(len(b)-at-4) {
		return 0, 0, fmt.Errorf("%w: a vector of %d elements in %d bytes", errMetadata, n, len(b))
	}
	return at + 4, n, nil
}

// tables calls fn for each table of slot s's vector of tables.
func (b fb) tables(pos, s int, fn func(t int) error) error {
	start, n, err := b.vector(pos, s, 4)
	if err != nil {
		return err
	}
	for k := range n {
		off, err := b.u32(start + 4*k)
		if err != nil {
			return err
		}
		if err := fn(start + 4*k + off); err != nil {
			return err
		}
	}
	return nil
}

// keyValues checks a custom_metadata vector (KeyValue: key 0, value 1).
func (b fb) keyValues(pos, s int) error {
	return b.tables(pos, s, func(kv int) error {
		if _, _, err := b.vector(kv, 0, 1); err != nil {
			return err
		}
		_, _, err := b.vector(kv, 1, 1)
		return err
	})
}

// schema checks a Schema (fields 1, custom_metadata 2, features 3).
func (b fb) schema(pos int) error {
	if err := b.tables(pos, 1, func(f int) error { return b.field1(f, 0) }); err != nil {
		return err
	}
	if err := b.keyValues(pos, 2); err != nil {
		return err
	}
	_, _, err := b.vector(pos, 3, 8)
	return err
}

// field1 checks a Field (name 0, type_type 2, type 3, children 5,
// custom_metadata 6) and its children.
func (b fb) field1(pos, depth int) error {
	if depth > maxFieldDepth {
		return fmt.Errorf("%w: fields nested deeper than %d", errMetadata, maxFieldDepth)
	}
	if _, _, err := b.vector(pos, 0, 1); err != nil {
		return err
	}
	tt, err := b.field(pos, 2)
	if err != nil {
		return err
	}
	if tt != 0 && tt < len(b) && b[tt] == 14 { // Union: typeIds (slot 1)
		typ, err := b.ref(pos, 3)
		if err != nil {
			return err
		}
		if typ != 0 {
			if _, _, err := b.vector(typ, 1, 4); err != nil {
				return err
			}
		}
	}
	if err := b.tables(pos, 5, func(c int) error { return b.field1(c, depth+1) }); err != nil {
		return err
	}
	return b.keyValues(pos, 6)
}

// message checks a Message (header_type 1, header 2, custom_metadata 4):
// a Schema (1), or a RecordBatch (3) or DictionaryBatch (2) whose
// RecordBatch has nodes 1, buffers 2 and variadicBufferCounts 4. It
// returns a RecordBatch's length (slot 0), else 0.
func (b fb) message() (int64, error) {
	pos, err := b.root()
	if err != nil {
		return 0, err
	}
	if err := b.keyValues(pos, 4); err != nil {
		return 0, err
	}
	tt, err := b.field(pos, 1)
	if err != nil || tt == 0 || tt >= len(b) {
		return 0, err
	}
	header, err := b.ref(pos, 2)
	if err != nil || header == 0 {
		return 0, err
	}
	kind := b[tt]
	switch kind {
	case 1:
		return 0, b.schema(header)
	case 2:
		if header, err = b.ref(header, 1); err != nil || header == 0 {
			return 0, err
		}
	case 3:
	default:
		return 0, nil
	}
	for _, v := range [][2]int{{1, 16}, {2, 16}, {4, 8}} {
		if _, _, err := b.vector(header, v[0], v[1]); err != nil {
			return 0, err
		}
	}
	if kind != 3 {
		return 0, nil
	}
	at, err := b.field(header, 0)
	if err != nil || at == 0 || at+8 > len(b) {
		return 0, err
	}
	return max(int64(binary.LittleEndian.Uint64(b[at:])), 0), nil
}

// verifyIPC checks every metadata flatbuffer of the IPC file or stream f,
// and returns the rows its record batches claim (a hint: to size what the
// rows are read into).
func verifyIPC(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	head := make([]byte, 8)
	if _, err := f.ReadAt(head, 0); err == nil && string(head[:6]) == IPCFileMagic {
		return verifyIPCFile(f, size)
	}
	return verifyMessages(f, 0, size)
}

// verifyIPCFile checks the footer (schema 1, dictionaries 2, record
// batches 3, custom_metadata 4) and the message each block points at.
func verifyIPCFile(f *os.File, size int64) (int64, error) {
	tail := make([]byte, 10)
	if size < 18 {
		return 0, errMetadata
	}
	if _, err := f.ReadAt(tail, size-10); err != nil {
		return 0, err
	}
	n := int64(binary.LittleEndian.Uint32(tail))
	if n <= 0 || n > size-18 {
		return 0, fmt.Errorf("%w: a footer of %d bytes in a file of %d", errMetadata, n, size)
	}
	footer := make(fb, n)
	if _, err := f.ReadAt(footer, size-10-n); err != nil {
		return 0, err
	}
	pos, err := footer.root()
	if err != nil {
		return 0, err
	}
	if s, err := footer.ref(pos, 1); err != nil {
		return 0, err
	} else if s != 0 {
		if err := footer.schema(s); err != nil {
			return 0, err
		}
	}
	if err := footer.keyValues(pos, 4); err != nil {
		return 0, err
	}
	var rows int64
	for _, slot := range []int{2, 3} {
		start, count, err := footer.vector(pos, slot, 24)
		if err != nil {
			return 0, err
		}
		for k := range count {
			block := footer[start+24*k:]
			offset, meta := int64(binary.LittleEndian.Uint64(block)), int64(int32(binary.LittleEndian.Uint32(block[8:])))
			n, err := verifyMessageAt(f, offset, meta, size)
			if err != nil {
				return 0, err
			}
			rows += n
		}
	}
	return rows, nil
}

// verifyMessageAt checks the message whose metadata (its length prefix
// included) is the meta bytes at offset.
func verifyMessageAt(f *os.File, offset, meta, size int64) (int64, error) {
	if offset < 0 || meta < 8 || offset > size-meta {
		return 0, fmt.Errorf("%w: a message of %d bytes at %d in a file of %d", errMetadata, meta, offset, size)
	}
	buf := make([]byte, meta)
	if _, err := f.ReadAt(buf, offset); err != nil {
		return 0, err
	}
	skip, n := messageLength(buf)
	buf = buf[skip:]
	if n > int64(len(buf)-4) {
		return 0, fmt.Errorf("%w: message metadata of %d bytes in %d", errMetadata, n, len(buf)-4)
	}
	return fb(buf[4 : 4+n]).message()
}

// verifyMessages walks a stream's messages from offset on.
func verifyMessages(f *os.File, offset, size int64) (int64, error) {
	var rows int64
	for offset < size {
		head := make([]byte, 8)
		if _, err := f.ReadAt(head, offset); err != nil {
			if err == io.EOF {
				return rows, nil // a short tail: the reader reports it
			}
			return 0, err
		}
		skip, n := messageLength(head)
		if n == 0 {
			return rows, nil // end of stream
		}
		if n > size-offset-skip-4 {
			return 0, fmt.Errorf("%w: message metadata of %d bytes at %d in a file of %d", errMetadata, n, offset, size)
		}
		meta := make(fb, n)
		if _, err := f.ReadAt(meta, offset+skip+4); err != nil {
			return 0, err
		}
		got, err := meta.message()
		if err != nil {
			return 0, err
		}
		body, err := meta.bodyLength()
		if err != nil {
			return 0, err
		}
		if body < 0 || body > size {
			return 0, fmt.Errorf("%w: a message body of %d bytes", errMetadata, body)
		}
		rows += got
		offset += skip + 4 + n + body
	}
	return rows, nil
}

// bodyLength is the Message's bodyLength (slot 3, a long).
func (b fb) bodyLength() (int64, error) {
	pos, err := b.root()
	if err != nil {
		return 0, err
	}
	at, err := b.field(pos, 3)
	if err != nil || at == 0 {
		return 0, err
	}
	if at+8 > len(b) {
		return 0, errMetadata
	}
	return int64(binary.LittleEndian.Uint64(b[at:])), nil
}

// messageLength reads an IPC message's length prefix, head its first 8
// bytes: skip is 4 after the continuation marker (0xFFFFFFFF) of the
// current format, 0 in the legacy one, and n the metadata's length (0:
// the end of the stream).
func messageLength(head []byte) (skip, n int64) {
	if binary.LittleEndian.Uint32(head) == 0xFFFFFFFF {
		skip, head = 4, head[4:]
	}
	return skip, int64(binary.LittleEndian.Uint32(head))
}
