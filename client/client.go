// Package client is a small Go client of knn serve (see docs/serve.md):
// nearest, k nearest and within-radius queries, and reference moves, over
// HTTP JSON. Every answer carries the reference version it was computed
// against. A Client is safe for concurrent use.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client talks to one knn serve.
type Client struct {
	// URL is the server's base, e.g. http://127.0.0.1:8427.
	URL string
	// Token, when set, is sent as a bearer token.
	Token string
	// HTTP is the client used (nil: http.DefaultClient).
	HTTP *http.Client
}

// New returns a client of the server at url.
func New(url string) *Client { return &Client{URL: strings.TrimRight(url, "/")} }

// Error is the server's refusal: the HTTP status, the request field at
// fault (if one is) and why.
type Error struct {
	Status  int
	Field   string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("knn serve: %d: %s", e.Status, e.Message)
}

// Nearest is the nearest reference of every point asked about.
type Nearest struct {
	Version   uint64    `json:"version"`
	Index     []uint32  `json:"index"`
	ID        []string  `json:"id"` // when the references have ids
	DistanceM []float64 `json:"distance_m"`
}

// KNearest is the k nearest references of every point, nearest first: a
// row is shorter than k where fewer lie within the maximum distance.
type KNearest struct {
	Version   uint64      `json:"version"`
	Index     [][]uint32  `json:"index"`
	ID        [][]string  `json:"id"`
	DistanceM [][]float64 `json:"distance_m"`
}

// Within is, for every point, the number of references within the radius
// and, when lists were asked for, which, nearest first.
type Within struct {
	Version   uint64      `json:"version"`
	Count     []uint32    `json:"count"`
	Index     [][]uint32  `json:"index"`
	ID        [][]string  `json:"id"`
	DistanceM [][]float64 `json:"distance_m"`
}

// Health is /healthz's answer.
type Health struct {
	Status     string `json:"status"`
	Engine     string `json:"engine"`
	Version    uint64 `json:"version"`
	References int    `json:"references"`
	IDs        bool   `json:"ids"`
}

type queryBody struct {
	Lat     []float64 `json:"lat"`
	Lon     []float64 `json:"lon"`
	K       int       `json:"k,omitempty"`
	MaxM    float64   `json:"max_m,omitempty"`
	RadiusM float64   `json:"radius_m,omitempty"`
	List    bool      `json:"list,omitempty"`
}

// Nearest asks for the nearest reference of every point (degrees).
func (c *Client) Nearest(ctx context.Context, lat, lon []float64) (*Nearest, error) {
	var out Nearest
	return &out, c.post(ctx, "/v1/nearest", queryBody{Lat: lat, Lon: lon}, &out)
}

// KNearest asks for the k nearest references of every point, none
// farther than maxM metres (0: no limit).
func (c *Client) KNearest(ctx context.Context, lat, lon []float64, k int, maxM float64) (*KNearest, error) {
	var out KNearest
	return &out, c.post(ctx, "/v1/knearest", queryBody{Lat: lat, Lon: lon, K: k, MaxM: maxM}, &out)
}

// Within asks how many references lie within radiusM metres of every
// point and, with list, which.
func (c *Client) Within(ctx context.Context, lat, lon []float64, radiusM float64, list bool) (*Within, error) {
	var out Within
	return &out, c.post(ctx, "/v1/within", queryBody{Lat: lat, Lon: lon, RadiusM: radiusM, List: list}, &out)
}

type updateBody struct {
	ID      []string  `json:"id,omitempty"`
	Lat     []float64 `json:"lat"`
	Lon     []float64 `json:"lon"`
	Replace bool      `json:"replace,omitempty"`
}

type updateAnswer struct {
	Version uint64 `json:"version"`
}

// Move moves the references named ids (by the id column, or by index
// where the references have none) and returns the version that has the
// moves: every query answered with that version or later sees them.
func (c *Client) Move(ctx context.Context, ids []string, lat, lon []float64) (uint64, error) {
	if ids == nil {
		return 0, errors.New("knn serve: Move needs the ids of the references to move")
	}
	var out updateAnswer
	err := c.post(ctx, "/v1/references", updateBody{ID: ids, Lat: lat, Lon: lon}, &out)
	return out.Version, err
}

// Replace makes the references exactly these (ids nil: named by index).
func (c *Client) Replace(ctx context.Context, ids []string, lat, lon []float64) (uint64, error) {
	var out updateAnswer
	err := c.post(ctx, "/v1/references", updateBody{ID: ids, Lat: lat, Lon: lon, Replace: true}, &out)
	return out.Version, err
}

// Health asks /healthz; a draining server answers an *Error of status 503.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	return &out, c.do(ctx, http.MethodGet, "/healthz", nil, &out)
}

func (c *Client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("knn serve: %w", err)
	}
	return c.do(ctx, http.MethodPost, path, body, out)
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return fmt.Errorf("knn serve: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("knn serve: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("knn serve: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{Status: resp.StatusCode}
		var msg struct {
			Error string `json:"error"`
			Field string `json:"field"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Error != "" {
			e.Message, e.Field = msg.Error, msg.Field
		} else {
			e.Message = strings.TrimSpace(string(data))
		}
		return e
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("knn serve: decoding the answer: %w", err)
	}
	return nil
}
