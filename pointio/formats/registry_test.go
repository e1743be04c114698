package formats

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/stream"
)

// TestForAnswers checks the extensions and names each format answers to.
func TestForAnswers(t *testing.T) {
	for path, want := range map[string]string{
		"a.csv": "csv", "a.TXT": "csv", "a": "csv", "-": "csv", "a.npz": "npz",
		"a.parquet": "parquet", "a.arrow": "arrow", "a.Feather": "arrow",
	} {
		if f, err := ForAnswers(path); err != nil || f.Name != want {
			t.Errorf("ForAnswers(%q) = %v, %v, want %s", path, f, err, want)
		}
	}
	for _, path := range []string{"a.npy", "a.csv.gz", "a.geojson"} {
		if f, err := ForAnswers(path); err == nil {
			t.Errorf("ForAnswers(%q) = %s, want an error", path, f.Name)
		}
	}
	for _, name := range []string{"csv", "npz", "parquet", "arrow"} {
		if f, err := Named(name); err != nil || f.Name != name {
			t.Errorf("Named(%q) = %v, %v", name, f, err)
		}
	}
	if _, err := Named("npy"); err == nil {
		t.Error("Named(npy): .npy holds no answers")
	}
}

// TestForPoints checks that .npy is a points format and the choices
// named.
func TestForPoints(t *testing.T) {
	if f, err := ForPoints("p.npy"); err != nil || f != &NPY {
		t.Errorf("ForPoints(p.npy) = %v, %v", f, err)
	}
	_, err := ForPoints("p.shp")
	want := `output p.shp: unknown format ".shp": name it .csv, .npz, .parquet, .arrow or .npy`
	if err == nil || err.Error() != want {
		t.Errorf("ForPoints(p.shp) = %v, want %s", err, want)
	}
}

// TestWholeIsOneChunk checks that every format writes answers held
// whole as the same bytes as the same answers streamed in chunks.
func TestWholeIsOneChunk(t *testing.T) {
	dir := t.TempDir()
	n := 1000
	a := stream.Answers{N: n, Nearest: func(i int) (uint32, float64) { return uint32(i % 7), float64(i) * 1.5 }}
	for _, f := range all {
		if f.Answers == nil {
			continue
		}
		whole, parts := filepath.Join(dir, "whole"+f.Exts[0]), filepath.Join(dir, "parts"+f.Exts[0])
		if err := f.WriteWhole(context.Background(), whole, nil, stream.KindNearest, 0, a); err != nil {
			t.Fatal(f.Name, err)
		}
		err := f.WriteAnswers(context.Background(), parts, nil, stream.KindNearest, 0, Options{Rows: n}, func(w stream.AnswerWriter) error {
			for lo := 0; lo < n; lo += 300 {
				c := a
				c.Base, c.N = lo, min(300, n-lo)
				c.Nearest = func(i int) (uint32, float64) { return a.Nearest(lo + i) }
				if err := w.Write(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(f.Name, err)
		}
		b1, _ := os.ReadFile(whole)
		b2, _ := os.ReadFile(parts)
		if len(b1) == 0 || !bytes.Equal(b1, b2) {
			t.Errorf("%s: whole %d bytes, in chunks %d bytes: not the same", f.Name, len(b1), len(b2))
		}
	}
}

// TestNewFormatIsOneEntry checks that a format added to the list is
// chosen by its extension and name and named in the choices, with no
// other change: what a new format costs besides its writer.
func TestNewFormatIsOneEntry(t *testing.T) {
	lines := Format{Name: "lines", Exts: []string{".lines"}, Answers: CSV.Answers}
	defer func(saved []*Format) { all = saved }(all)
	all = append(all[:len(all):len(all)], &lines)
	if f, err := ForAnswers("a.lines"); err != nil || f != &lines {
		t.Errorf("ForAnswers(a.lines) = %v, %v", f, err)
	}
	if f, err := Named("lines"); err != nil || f != &lines {
		t.Errorf("Named(lines) = %v, %v", f, err)
	}
	if got, want := Names(), "csv, npz, parquet, arrow or lines"; got != want {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	if err := lines.CheckRows(true); err == nil {
		t.Error("CheckRows: a format without rows took identifiers")
	}
	a := stream.Answers{N: 1, Nearest: func(int) (uint32, float64) { return 3, 2 }}
	out := filepath.Join(t.TempDir(), "a.lines")
	if err := lines.WriteWhole(context.Background(), out, nil, stream.KindNearest, 0, a); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "obs_index,ref_index,distance_m\n0,3,2.000\n" {
		t.Errorf("wrote %q", b)
	}
}

// Every extension that chooses an output's format is one the readers
// take for that format (pointio.FormatByExt, the one table of them).
func TestExtsAreInputExts(t *testing.T) {
	for _, f := range all {
		for _, ext := range f.Exts {
			if got := pointio.FormatByExt("x" + ext); got != f.Name {
				t.Errorf("%s: output extension %s is read as %q", f.Name, ext, got)
			}
		}
	}
}
