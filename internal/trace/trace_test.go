package trace

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

func TestNilRecordsNothing(t *testing.T) {
	var r *Recorder
	r.Add("host", "x", time.Now(), time.Second)
	r.Begin("host", "y")()
	if len(r.Spans()) != 0 || len(r.Totals()) != 0 {
		t.Error("a nil recorder recorded")
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
}

func TestTotalsAndJSON(t *testing.T) {
	r := New()
	start := r.t0.Add(time.Millisecond)
	var wg sync.WaitGroup
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Add("GPU 0 slot "+string(rune('0'+k%2)), "kernels", start, 2*time.Millisecond)
		}()
	}
	wg.Wait()
	r.Add("host", "write", start, 5*time.Millisecond)
	tot := r.Totals()
	if len(tot) != 2 || tot[0].Name != "kernels" || tot[0].Count != 4 || tot[0].Sum != 8*time.Millisecond ||
		tot[1].Sum != 5*time.Millisecond {
		t.Fatalf("totals %+v", tot)
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []event `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	names, spans := 0, 0
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "M":
			names++
		case "X":
			spans++
			if e.Ts != 1000 || e.Tid < 1 || e.Tid > 3 {
				t.Errorf("span %+v", e)
			}
		}
	}
	if names != 3 || spans != 5 {
		t.Errorf("%d thread names and %d spans, want 3 and 5", names, spans)
	}
}
