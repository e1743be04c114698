package main

import (
	"strings"
	"testing"
)

func TestParseResponse(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 5\r\n\r\nhello"
	for _, c := range []struct {
		in   string
		size int
		err  string
	}{
		{ok, len(ok), ""},
		{ok + ok, len(ok), ""},  // pipelined: the first
		{ok[:len(ok)-1], 0, ""}, // body not whole yet
		{ok[:20], 0, ""},        // head not whole yet
		{"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", 0, "401"},
		{"HTTP/1.1 200 OK\r\n\r\n", 0, "without Content-Length"},
		{"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, "Content-Length"},
	} {
		size, err := parseResponse([]byte(c.in))
		if size != c.size || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %d, %v; want %d, %q", c.in, size, err, c.size, c.err)
		}
	}
}

// FuzzParseResponse: a response's size is within what was read, and
// the bytes read after it do not change it.
func FuzzParseResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 503 Service Unavailable\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		size, err := parseResponse(b)
		if size < 0 || size > len(b) || (err != nil && size != 0) {
			t.Fatalf("%q: %d, %v", b, size, err)
		}
		if size > 0 {
			if again, err := parseResponse(append(b[:size:size], "HTTP/1.1 200"...)); again != size || err != nil {
				t.Fatalf("%q: %d then %d, %v", b, size, again, err)
			}
		}
	})
}
