package serve

import (
	"bytes"
	"strconv"
)

// fastQuery parses the common small query body ({"lat": ..., "lon": ...}
// with k, max_m, radius_m, list; numbers or arrays of numbers) without
// reflection: most of the traffic is such bodies, and encoding/json cost
// a tenth of a one-point request. Anything else (another key, a
// duplicate, a string, an odd number) reports ok false, and the caller
// decodes the body with encoding/json, whose errors name what is wrong.
func fastQuery(b []byte) (q jsonQuery, ok bool) {
	return q, fastQueryInto(b, &q)
}

// fastQueryInto is fastQuery into q, whose coordinate slices are reused
// (a connection's, from one request to the next): a one-point request
// allocates nothing here.
func fastQueryInto(b []byte, q *jsonQuery) bool {
	*q = jsonQuery{Lat: numbers{v: q.Lat.v[:0]}, Lon: numbers{v: q.Lon.v[:0]}}
	p := scanner{b: b}
	if !p.byte('{') {
		return false
	}
	seen := 0
	for first := true; ; first = false {
		p.space()
		if p.peek() == '}' {
			p.i++
			break
		}
		if !first && !p.byte(',') {
			return false
		}
		key, ok := p.key()
		if !ok || !p.byte(':') {
			return false
		}
		var bit int
		switch string(key) { // no string is made for the switch
		case "lat":
			bit, ok = 1, p.numbers(&q.Lat)
		case "lon":
			bit, ok = 2, p.numbers(&q.Lon)
		case "k":
			var f float64
			if bit, ok = 4, p.number(&f); ok && p.integer && f >= -1<<31 && f <= 1<<31 {
				k := int(f)
				q.K = &k
			} else {
				ok = false
			}
		case "max_m":
			var f float64
			bit, ok = 8, p.number(&f)
			q.MaxM = &f
		case "radius_m":
			var f float64
			bit, ok = 16, p.number(&f)
			q.RadiusM = &f
		case "list":
			bit, ok = 32, p.boolean(&q.List)
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	p.space()
	return p.i == len(p.b) && seen&3 == 3
}

type scanner struct {
	b []byte
	i int
	// integer says the last number had no fraction or exponent.
	integer bool
}

func (p *scanner) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *scanner) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *scanner) byte(c byte) bool {
	p.space()
	if p.peek() != c {
		return false
	}
	p.i++
	return true
}

// key reads a plain string (no escapes), a slice of the body.
func (p *scanner) key() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	end := bytes.IndexByte(p.b[p.i:], '"')
	if end < 0 || bytes.IndexByte(p.b[p.i:p.i+end], '\\') >= 0 {
		return nil, false
	}
	k := p.b[p.i : p.i+end]
	p.i += end + 1
	return k, true
}

// number reads a JSON number: an optional minus, digits, fraction,
// exponent (strconv alone would take "Inf", hex and underscores).
func (p *scanner) number(f *float64) bool {
	p.space()
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	lead := p.i
	if n := digits(); n == 0 || (n > 1 && p.b[lead] == '0') {
		return false // JSON has no leading zeros
	}
	p.integer = true
	if p.peek() == '.' {
		p.integer = false
		p.i++
		if digits() == 0 {
			return false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.integer = false
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	v, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	*f = v
	return err == nil
}

func (p *scanner) numbers(n *numbers) bool {
	p.space()
	if p.peek() != '[' {
		var f float64
		if !p.number(&f) {
			return false
		}
		n.v, n.scalar = append(n.v[:0], f), true
		return true
	}
	p.i++
	if n.v = n.v[:0]; n.v == nil {
		n.v = make([]float64, 0, 4)
	}
	p.space()
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		var f float64
		if !p.number(&f) {
			return false
		}
		n.v = append(n.v, f)
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *scanner) boolean(v *bool) bool {
	p.space()
	switch {
	case bytes.HasPrefix(p.b[p.i:], []byte("true")):
		*v, p.i = true, p.i+4
	case bytes.HasPrefix(p.b[p.i:], []byte("false")):
		*v, p.i = false, p.i+5
	default:
		return false
	}
	return true
}
