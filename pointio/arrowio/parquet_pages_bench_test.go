package arrowio

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/geoknn/geoknn/stream"
)

// queryGroup is one row group of answers as a stream's writer holds it:
// the nearest (or k nearest, nearest first) of 135,233 references to
// uniform points, in input order: random reference indices, distances up
// to 2,000 km.
func queryGroup(kind stream.AnswerKind, k int) *answerGroup {
	r := rand.New(rand.NewPCG(1, 2))
	items := GroupItems(kind, k)
	ref, metres := make([]uint32, items*k), make([]float64, items*k)
	for i := range items {
		for j := range k {
			ref[i*k+j], metres[i*k+j] = r.Uint32N(135_233), r.Float64()*2e6
		}
		slices.Sort(metres[i*k : (i+1)*k])
	}
	a := stream.Answers{N: items,
		Nearest: func(i int) (uint32, float64) { return ref[i], metres[i] },
		KRow:    func(i, j int) (uint32, float64, bool) { return ref[i*k+j], metres[i*k+j], true }}
	g := &answerGroup{k: k}
	g.reset(0)
	g.add(kind, a, 0, items)
	return g
}

// One row group of answers (2^19 rows: the nearest of 2^19 observations,
// the 8 nearest of 2^16) encoded by arrow-go's column writers and by the
// page writer, the same bytes. Run with -cpu 1 (a group's columns are
// encoded side by side): cpu-ns/row is the process's CPU time a row,
// which other load on the machine leaves as it is.
func BenchmarkAnswerGroupEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		kind stream.AnswerKind
		k    int
	}{{"nearest", stream.KindNearest, 1}, {"k8", stream.KindKNearest, 8}} {
		g := queryGroup(tc.kind, tc.k)
		schema := arrow.NewSchema(answerFields(tc.kind), nil)
		rows := int(g.record(tc.kind, schema).NumRows())
		for _, way := range []string{"arrow-go", "pages"} {
			asm := &parquetAssembler{schema: schema}
			if way == "pages" {
				asm.pages = newParquetPages(schema)
			}
			b.Run(tc.name+"/"+way, func(b *testing.B) {
				var bytesOut int
				cpu := processCPU()
				for b.Loop() {
					e, err := asm.encode(g.record(tc.kind, schema), &g.enc)
					if err != nil {
						b.Fatal(err)
					}
					bytesOut = 0
					for _, piece := range e.body {
						bytesOut += len(piece)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
				b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N)/float64(rows), "cpu-ns/row")
				b.ReportMetric(float64(bytesOut)/float64(rows), "bytes/row")
			})
		}
	}
}
