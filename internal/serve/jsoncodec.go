package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/geoknn/geoknn/stream"
)

// numbers is a JSON number or array of numbers: {"lat": 52.5} asks about
// one point and is answered with scalars, {"lat": [52.5]} with arrays.
type numbers struct {
	v      []float64
	scalar bool
}

func (n *numbers) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &n.v)
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	n.v, n.scalar = []float64{f}, true
	return nil
}

// strs is a JSON string or number, or an array of them: reference ids.
type strs struct{ v []string }

func (s *strs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		id, err := idOf(b)
		s.v = []string{id}
		return err
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	s.v = make([]string, len(raw))
	for i, r := range raw {
		id, err := idOf(r)
		if err != nil {
			return err
		}
		s.v[i] = id
	}
	return nil
}

// idOf reads an id given as a string or an integer.
func idOf(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return "", errors.New("an id is a string or an integer")
	}
	if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
		return "", fmt.Errorf("id %s is not an integer", n)
	}
	return string(n), nil
}

// jsonQuery is a query's JSON body. Coordinates are degrees.
type jsonQuery struct {
	Lat     numbers  `json:"lat"`
	Lon     numbers  `json:"lon"`
	K       *int     `json:"k"`
	MaxM    *float64 `json:"max_m"`
	RadiusM *float64 `json:"radius_m"`
	List    bool     `json:"list"`
}

// jsonUpdate is a reference update's JSON body.
type jsonUpdate struct {
	ID      strs    `json:"id"`
	Lat     numbers `json:"lat"`
	Lon     numbers `json:"lon"`
	Replace bool    `json:"replace"`
}

// decodeJSON reads one JSON value of body into v, naming what is wrong.
func decodeJSON(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mb interface{ Error() string }
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return badRequest(te.Field, fmt.Sprintf("a %s where the field takes another type", te.Value))
		case errors.Is(err, io.EOF):
			return badRequest("body", "empty body: a JSON object was expected")
		case isMaxBytes(err), isRequestErr(err):
			return err
		}
		mb = err
		if name, ok := strings.CutPrefix(mb.Error(), "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			return badRequest(name, "unknown field (queries take lat, lon, k, max_m, radius_m, list; updates id, lat, lon, replace)")
		}
		return badRequest("body", "not valid JSON: "+mb.Error())
	}
	if dec.More() {
		return badRequest("body", "more than one JSON value")
	}
	return nil
}

// pointsOf checks a request's coordinates (degrees) and returns them in
// radians.
func pointsOf(lat, lon numbers, maxPoints int) (latRad, lonRad []float64, err error) {
	if len(lat.v) != len(lon.v) {
		return nil, nil, fieldErr("lon", fmt.Sprintf("%d longitudes for %d latitudes", len(lon.v), len(lat.v)))
	}
	if len(lat.v) > maxPoints {
		return nil, nil, tooLarge("lat", fmt.Sprintf("%d points: more than the %d a request takes (--max-points)", len(lat.v), maxPoints))
	}
	latRad, lonRad = make([]float64, len(lat.v)), make([]float64, len(lat.v))
	for i := range lat.v {
		if err := checkDegrees(i, lat.v[i], lon.v[i]); err != nil {
			return nil, nil, err
		}
		latRad[i], lonRad[i] = lat.v[i]*degToRad, wrapLon(lon.v[i])*degToRad
	}
	return latRad, lonRad, nil
}

// pointsInPlace is pointsOf writing the radians over the degrees of lat
// and lon (the caller's own, parsed for this request), allocating
// nothing.
func pointsInPlace(lat, lon numbers, maxPoints int) (latRad, lonRad []float64, err error) {
	if len(lat.v) != len(lon.v) {
		return nil, nil, fieldErr("lon", fmt.Sprintf("%d longitudes for %d latitudes", len(lon.v), len(lat.v)))
	}
	if len(lat.v) > maxPoints {
		return nil, nil, tooLarge("lat", fmt.Sprintf("%d points: more than the %d a request takes (--max-points)", len(lat.v), maxPoints))
	}
	for i := range lat.v {
		if err := checkDegrees(i, lat.v[i], lon.v[i]); err != nil {
			return nil, nil, err
		}
		lat.v[i], lon.v[i] = lat.v[i]*degToRad, wrapLon(lon.v[i])*degToRad
	}
	return lat.v, lon.v, nil
}

// checkMetres refuses a distance that is not a finite number above min.
func checkMetres(field string, v *float64, positive bool) (float64, error) {
	if v == nil {
		if positive {
			return 0, fieldErr(field, "required")
		}
		return 0, nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 || (positive && *v == 0) {
		return 0, fieldErr(field, fmt.Sprintf("%v: a distance in metres above 0 was expected", *v))
	}
	return *v, nil
}

// jsonWriter builds a JSON answer without reflection: small answers are
// most of the traffic.
type jsonWriter struct{ b []byte }

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) metres(rad float32) {
	if math.IsInf(float64(rad), 0) || math.IsNaN(float64(rad)) {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = strconv.AppendFloat(w.b, float64(rad)*EarthRadius, 'f', 3, 64)
}

func (w *jsonWriter) str(s string) {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		w.b = append(w.b, '"')
		w.b = append(w.b, s...)
		w.b = append(w.b, '"')
		return
	}
	enc, _ := json.Marshal(s) // a string always marshals
	w.b = append(w.b, enc...)
}

func (w *jsonWriter) uint(v uint64) { w.b = strconv.AppendUint(w.b, v, 10) }

// writeAnswerJSON writes a's answer for q: scalars for one point asked as
// scalars, arrays (of arrays, for k nearest and lists) otherwise.
func writeAnswerJSON(w *jsonWriter, q *query, a *answer, scalar bool) {
	s := a.snap
	w.raw(`{"version":`)
	w.uint(s.version)
	n := len(q.lat)
	// each writes point i's field: one value, or a row of them.
	each := func(name string, one func(i int)) {
		w.raw(`,"` + name + `":`)
		if scalar {
			one(0)
			return
		}
		w.raw("[")
		for i := range n {
			if i > 0 {
				w.raw(",")
			}
			one(i)
		}
		w.raw("]")
	}
	// row writes entries [lo, hi) of the flat answer with val.
	row := func(lo, hi int, val func(j int)) {
		w.raw("[")
		for j := lo; j < hi; j++ {
			if j > lo {
				w.raw(",")
			}
			val(j)
		}
		w.raw("]")
	}
	idx := func(j int) { w.uint(uint64(a.index[j])) }
	id := func(j int) { w.str(s.id(a.index[j])) }
	dist := func(j int) { w.metres(a.dist[j]) }
	switch q.kind() {
	case stream.KindNearest:
		each("index", idx)
		if s.ids != nil {
			each("id", id)
		}
		each("distance_m", dist)
	case stream.KindKNearest:
		k := q.ask.K
		// A row ends where fewer than k references lie within max_m.
		end := func(i int) int {
			e := i * k
			for e < (i+1)*k && a.index[e] != noNeighbour {
				e++
			}
			return e
		}
		each("index", func(i int) { row(i*k, end(i), idx) })
		if s.ids != nil {
			each("id", func(i int) { row(i*k, end(i), id) })
		}
		each("distance_m", func(i int) { row(i*k, end(i), dist) })
	case stream.KindWithinCounts, stream.KindWithinLists:
		each("count", func(i int) { w.uint(uint64(a.counts[i])) })
		if q.kind() == stream.KindWithinLists {
			span := func(i int, val func(int)) { row(int(a.offsets[i]), int(a.offsets[i+1]), val) }
			each("index", func(i int) { span(i, idx) })
			if s.ids != nil {
				each("id", func(i int) { span(i, id) })
			}
			each("distance_m", func(i int) { span(i, dist) })
		}
	}
	w.raw("}\n")
}

// writeErrorJSON writes an error answer naming the field at fault.
func writeErrorJSON(w *jsonWriter, err error, field string) {
	w.raw(`{"error":`)
	w.str(err.Error())
	if field != "" {
		w.raw(`,"field":`)
		w.str(field)
	}
	w.raw("}\n")
}
