package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/geoknn/geoknn/pointio"
)

// WriteJSON writes the report as indented JSON to path atomically
// (pointio.WriteAtomic): the file holds either its old content or the whole
// report.
func (r *Report) WriteJSON(path string) error {
	return pointio.WriteAtomic(path, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// ReadJSON reads a report that WriteJSON wrote.
func ReadJSON(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	return &r, nil
}
