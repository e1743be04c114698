package geoknn

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/geoknn/geoknn/internal/engine"
)

// fakeGPU is the CPU engine dressed as the GPU engine is, through the
// optional interfaces alone: it records the ranges pinned, refuses k
// above max, and notes a close at exit. The root package must find each
// by assertion, with no concrete engine named.
type fakeGPU struct {
	engine.Engine
	max       int
	pinned    map[unsafe.Pointer]int
	exitClose bool
}

func (f *fakeGPU) RegisterHost(p unsafe.Pointer, bytes int) error {
	f.pinned[p] = bytes
	return nil
}

func (f *fakeGPU) UnregisterHost(p unsafe.Pointer) error {
	if _, ok := f.pinned[p]; !ok {
		return errors.New("not registered")
	}
	delete(f.pinned, p)
	return nil
}

func (f *fakeGPU) CloseAtExit() { f.exitClose = true }

func (f *fakeGPU) MaxK() int { return f.max }

func (f *fakeGPU) KNearest(ctx context.Context, req engine.Request, maxRad float64, out engine.KResult) (engine.Stats, error) {
	if out.K > f.max {
		return engine.Stats{}, errors.New("k above the limit")
	}
	return f.Engine.KNearest(ctx, req, maxRad, out)
}

func dressed(t *testing.T) (*Searcher, *fakeGPU) {
	s, err := NewSearcher(Options{Engine: CPU})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeGPU{Engine: s.eng, max: 4, pinned: map[unsafe.Pointer]int{}}
	s.eng = f
	return s, f
}

// Pin and PinResult register each column with an engine that pins, and
// unpin undoes it.
func TestPinsThroughHostPinner(t *testing.T) {
	s, f := dressed(t)
	defer s.Close()
	unpin, err := s.Pin(Radians64(make([]float64, 10), make([]float64, 10)))
	if err != nil || len(f.pinned) != 2 {
		t.Fatalf("Pin: %d ranges, %v", len(f.pinned), err)
	}
	for _, bytes := range f.pinned {
		if bytes != 80 {
			t.Errorf("a column of 10 float64 pinned as %d bytes", bytes)
		}
	}
	if err := unpin(); err != nil || len(f.pinned) != 0 {
		t.Fatalf("unpin: %d ranges left, %v", len(f.pinned), err)
	}
	unpin, err = s.PinResult(NewResult(5))
	if err != nil || len(f.pinned) != 2 || !s.pinsHost() {
		t.Fatalf("PinResult: %d ranges, %v", len(f.pinned), err)
	}
	if err := unpin(); err != nil {
		t.Fatal(err)
	}
}

// k above the engine's limit is answered on the CPU engine, with the
// plain engine's rows and a note.
func TestKNearestAboveTheEngineLimit(t *testing.T) {
	s, _ := dressed(t)
	defer s.Close()
	plain, err := NewSearcher(Options{Engine: CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	obs, _ := Generated(UniformSphere, 300, 1)
	ref, _ := Generated(UniformSphere, 200, 2)
	for _, k := range []int{4, 9} {
		got, err := s.KNearest(context.Background(), obs, ref, k, 0)
		if err != nil {
			t.Fatalf("k %d: %v", k, err)
		}
		want, err := plain.KNearest(context.Background(), obs, ref, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.DistanceRad, want.DistanceRad) {
			t.Errorf("k %d: rows differ", k)
		}
		if on := strings.Contains(got.Stats.Note, "on the CPU"); on != (k > 4) {
			t.Errorf("k %d: note %q", k, got.Stats.Note)
		}
	}
}

// CloseAtExit uses an engine's fast close when it has one.
func TestCloseAtExitThroughExitCloser(t *testing.T) {
	s, f := dressed(t)
	inner := f.Engine
	if err := s.CloseAtExit(); err != nil || !f.exitClose {
		t.Fatalf("CloseAtExit: %v, fast close %v", err, f.exitClose)
	}
	if _, err := s.Nearest(context.Background(), Points{}, Points{}); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after CloseAtExit: %v", err)
	}
	inner.Close()
}
