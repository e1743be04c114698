package serve

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/client"
)

// postArrow posts an Arrow body and reads the answer's columns.
func postArrow(t *testing.T, url string, body []byte) (map[string]arrow.Array, string, error) {
	t.Helper()
	resp, err := http.Post(url, arrowStreamType, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("%s: %d %s", url, resp.StatusCode, b)
		return nil, "", nil
	}
	if resp.ContentLength <= 0 {
		t.Errorf("answer without a Content-Length")
	}
	cols, v := readArrowAnswer(t, resp.Body)
	return cols, v, nil
}

// A bulk body of several batches of float32 columns (copied, not read in
// place) is answered as the in-process engine answers.
func TestBulkBatchesFloat32(t *testing.T) {
	_, hs, r := newTest(t, 3000, false, nil)
	x, err := cpuOpen(geoknn.Radians64(r.lat, r.lon))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	qlat, qlon := uniform(12000, 5)
	schema := arrow.NewSchema([]arrow.Field{{Name: "latitude", Type: arrow.PrimitiveTypes.Float32},
		{Name: "lng", Type: arrow.PrimitiveTypes.Float32}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	lat32, lon32 := make([]float64, len(qlat)), make([]float64, len(qlon))
	for from := 0; from < len(qlat); from += 5000 {
		to := min(from+5000, len(qlat))
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := from; i < to; i++ {
			b.Field(0).(*array.Float32Builder).Append(float32(qlat[i]))
			b.Field(1).(*array.Float32Builder).Append(float32(qlon[i]))
			lat32[i], lon32[i] = float64(float32(qlat[i])), float64(float32(qlon[i]))
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cols, _, err := postArrow(t, hs.URL+"/v1/nearest", buf.Bytes())
	if err != nil || cols == nil {
		t.Fatal(err)
	}
	want, _ := x.Nearest(context.Background(), geoknn.Radians64(radians(lat32), radians(lon32)))
	ix, dm := cols["ref_index"].(*array.Uint32), cols["distance_m"].(*array.Float64)
	if ix.Len() != len(qlat) {
		t.Fatalf("%d rows for %d points", ix.Len(), len(qlat))
	}
	for i := range qlat {
		if ix.Value(i) != want.Index[i] || dm.Value(i) != float64(want.DistanceRad[i])*EarthRadius {
			t.Fatalf("point %d: %d, in-process %d", i, ix.Value(i), want.Index[i])
		}
	}
}

// TestBulkRacingUpdates: bulk queries (answered by the engine in bulk
// slots, more at once than there are slots) race moves of the references;
// every answer is exact against the version it reports, by brute force.
func TestBulkRacingUpdates(t *testing.T) {
	const n = 1024
	_, hs, r0 := newTest(t, n, true, func(c *Config) { c.BulkSlots = 2 })
	c := client.New(hs.URL)
	ctx := context.Background()
	var mu sync.Mutex
	versions := map[uint64]refs{1: r0}
	stop := make(chan struct{})
	type got struct {
		v     uint64
		index []uint32
		m     []float64
	}
	const points = 5000 // 80 KB of body: a bulk slot
	qlat, qlon := uniform(points, 77)
	body := arrowBody(t, qlat, qlon, nil)
	answers := make([][]got, 3)
	var wg sync.WaitGroup
	for w := range answers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				cols, v, err := postArrow(t, hs.URL+"/v1/nearest", body)
				if err != nil || cols == nil {
					t.Error(err)
					return
				}
				ver, _ := strconv.ParseUint(v, 10, 64)
				answers[w] = append(answers[w], got{ver, cols["ref_index"].(*array.Uint32).Uint32Values(),
					cols["distance_m"].(*array.Float64).Float64Values()})
			}
		})
	}
	cur := r0
	for step := range 12 {
		ids := make([]string, n/2+step)
		mlat, mlon := uniform(len(ids), uint64(300+step))
		next := refs{append([]float64(nil), cur.lat...), append([]float64(nil), cur.lon...)}
		for k := range ids {
			i := (k*7 + step) % n
			ids[k] = "v" + strconv.Itoa(i)
			next.lat[i], next.lon[i] = mlat[k]*degToRad, mlon[k]*degToRad
		}
		v, err := c.Move(ctx, ids, mlat, mlon)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		versions[v] = next
		mu.Unlock()
		cur = next
	}
	close(stop)
	wg.Wait()
	checked := 0
	for _, as := range answers {
		for _, a := range as {
			r, ok := versions[a.v]
			if !ok {
				t.Fatalf("answer of unknown version %d", a.v)
			}
			for i := 0; i < points; i += 97 { // a sample: brute force is slow
				lat, lon := qlat[i]*degToRad, qlon[i]*degToRad
				_, d := r.sorted(lat, lon)
				checkNeighbour(t, r, lat, lon, d, 0, a.index[i], a.m[i])
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no answers checked")
	}
}

// A bulk body's bad point is refused with its field and place, the
// first of several.
func TestBulkBadPoint(t *testing.T) {
	_, hs, _ := newTest(t, 100, false, nil)
	qlat, qlon := uniform(70000, 6)
	qlat[69000], qlon[40000], qlat[50000] = 95, 400, math.NaN()
	resp, err := http.Post(hs.URL+"/v1/nearest", arrowStreamType, bytes.NewReader(arrowBody(t, qlat, qlon, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), `"lon"`) || !strings.Contains(string(b), "point 40000") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
