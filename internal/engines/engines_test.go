package engines

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/cpu"
	"github.com/geoknn/geoknn/internal/engine"
	"github.com/geoknn/geoknn/internal/enginetest"
)

// limited is the CPU engine with a k limit, as the GPU engine has one: it
// refuses k above it, so a larger k must be answered elsewhere.
type limited struct {
	*cpu.CPU
	max int
}

func (l limited) MaxK() int { return l.max }

func (l limited) KNearest(ctx context.Context, req engine.Request, maxRad float64, out engine.KResult) (engine.Stats, error) {
	if out.K > l.max {
		return engine.Stats{}, errors.New("k above the limit")
	}
	return l.CPU.KNearest(ctx, req, maxRad, out)
}

// Above an engine's limit KNearest answers on the CPU engine, with the
// same rows as the CPU engine gives and a note that says so; at or below
// it the engine answers.
func TestKNearestAboveTheLimit(t *testing.T) {
	obs, ref := enginetest.SpherePoints(500, 1), enginetest.SpherePoints(300, 2)
	req := engine.Request{Obs: obs, Ref: ref}
	eng := limited{cpu.NewCPU(2), 4}
	for _, k := range []int{4, 5, 70} {
		want := kResult(obs.Len(), k)
		if _, err := cpu.NewCPU(0).KNearest(context.Background(), req, math.Inf(1), want); err != nil {
			t.Fatal(err)
		}
		got := kResult(obs.Len(), k)
		st, err := KNearest(context.Background(), eng, req, math.Inf(1), got)
		if err != nil {
			t.Fatalf("k %d: %v", k, err)
		}
		if !slices.Equal(got.Index, want.Index) || !slices.Equal(got.Distance, want.Distance) {
			t.Errorf("k %d: rows differ from the CPU engine's", k)
		}
		if on := strings.Contains(st.Note, "on the CPU: the GPU kernels answer k up to 4"); on != (k > 4) {
			t.Errorf("k %d: note %q", k, st.Note)
		}
	}
}

func kResult(n, k int) engine.KResult {
	return engine.KResult{K: k, Index: make([]uint32, n*k), Distance: make([]float32, n*k)}
}

// Open on the CPU opens the CPU engine; on Auto without a usable GPU it
// falls back to it and says why; the GPU asked for by name, or an
// algorithm of the GPU's only, is an error when there is none.
func TestOpen(t *testing.T) {
	o, err := Open(Options{Kind: CPU})
	if err != nil || o.OnGPU || o.Fallback != "" {
		t.Fatalf("CPU: %+v, %v", o, err)
	}
	o.Engine.Close()
	if _, _, err := ListDevices(); err == nil {
		t.Skip("a GPU is present: the fallbacks are not reached")
	}
	o, err = Open(Options{})
	if err != nil || o.OnGPU || o.Fallback == "" {
		t.Fatalf("Auto with no GPU: %+v, %v", o, err)
	}
	o.Engine.Close()
	if _, err := Open(Options{Kind: GPU}); err == nil || !strings.HasPrefix(err.Error(), "GPU engine: ") {
		t.Errorf("GPU with no GPU: %v", err)
	}
	if _, err := Open(Options{Algorithm: engine.Seed}); err == nil || err.Error() != "the seed algorithm runs on the GPU only" {
		t.Errorf("seed with no GPU: %v", err)
	}
}
