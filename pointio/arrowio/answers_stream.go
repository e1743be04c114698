package arrowio

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/stream"
)

// answerGroup is the answers of a batch's observations (parquetGroupItems
// of them but for the last batch), copied out of the chunks they came in
// (whose buffers the query reuses) until the batch is encoded, and the
// encoding. A writer's groups are reused from batch to batch: fresh
// 20 MB buffers cost more in page faults and clearing than the copy.
type answerGroup struct {
	base, items int
	k           int
	obs         []int64       // nearest: the obs_index column
	ref         []uint32      // nearest: one an item; k nearest: k an item; lists: the entries
	metres      []float64     // as ref
	rows        []int32       // k nearest: the answers found of each item
	rank        []int32       // k nearest: the rank column, while encoded
	counts      []uint32      // radius: each item's count
	enc         encodeScratch // what its batch is encoded into (Parquet)
}

// reset empties g for the batch whose first observation is base.
func (g *answerGroup) reset(base int) {
	g.base, g.items = base, 0
	g.obs, g.ref, g.metres, g.rows, g.counts = g.obs[:0], g.ref[:0], g.metres[:0], g.rows[:0], g.counts[:0]
	for c := range g.enc.bufs {
		g.enc.bufs[c].Reset()
	}
}

// add copies a's observations [lo, hi) (indices of a) in.
func (g *answerGroup) add(kind stream.AnswerKind, a stream.Answers, lo, hi int) {
	at, n := g.items, hi-lo
	g.items += n
	switch kind {
	case stream.KindNearest:
		g.obs, g.ref, g.metres = grow(g.obs, g.items), grow(g.ref, g.items), grow(g.metres, g.items)
		parallel.Blocks(n, 1<<14, 0, func(_, b0, b1 int) {
			for j := b0; j < b1; j++ {
				g.obs[at+j] = int64(g.base + at + j)
				g.ref[at+j], g.metres[at+j] = a.Nearest(lo + j)
			}
		})
	case stream.KindKNearest:
		g.addK(a, lo, n, at)
	default:
		g.addWithin(kind, a, lo, n)
	}
}

// addK copies n rows of k answers, from a's row lo, to item at on.
func (g *answerGroup) addK(a stream.Answers, lo, n, at int) {
	k := g.k
	g.ref, g.metres, g.rows = grow(g.ref, g.items*k), grow(g.metres, g.items*k), grow(g.rows, g.items)
	parallel.Blocks(n, 1<<12, 0, func(_, b0, b1 int) {
		for j := b0; j < b1; j++ {
			found := int32(0)
			for r := range k {
				ref, m, ok := a.KRow(lo+j, r)
				if !ok {
					break
				}
				g.ref[(at+j)*k+r], g.metres[(at+j)*k+r] = ref, m
				found++
			}
			g.rows[at+j] = found
		}
	})
}

// listRoom is how far from lo (up to hi) a's observations' lists fit in
// g beside its entries, parquetGroupEntries at most (one observation at
// least in a group), and whether g is then full.
func (g *answerGroup) listRoom(a stream.Answers, lo, hi int) (int, bool) {
	entries := len(g.ref)
	for j := lo; j < hi; j++ {
		c := a.Within.Count(j)
		if entries+c > parquetGroupEntries && (j > lo || g.items > 0) {
			return j, true
		}
		entries += c
	}
	return hi, false
}

// addWithin copies n radius answers (their lists too for KindWithinLists).
func (g *answerGroup) addWithin(kind stream.AnswerKind, a stream.Answers, lo, n int) {
	for j := lo; j < lo+n; j++ {
		c := a.Within.Count(j)
		g.counts = append(g.counts, uint32(c))
		if kind != stream.KindWithinLists {
			continue
		}
		for r := range c {
			ref, m := a.Within.Ref(j, r)
			g.ref, g.metres = append(g.ref, ref), append(g.metres, m)
		}
	}
}

// grow is s with length n, its first elements kept (s[:0]: none kept,
// its memory reused where it holds n).
func grow[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	out := make([]T, n, max(n, 2*cap(s)))
	copy(out, s)
	return out
}

// record is the group as the batch today's writers make of the same
// observations, columns over the group's own memory: the encodings match
// those of the builders' batches byte for byte (no row is null, so no
// validity bitmap is written either way), at a fraction of the cost (the
// builders took 60% of a k-nearest group's encoding on the CPU).
func (g *answerGroup) record(kind stream.AnswerKind, schema *arrow.Schema) arrow.RecordBatch {
	switch kind {
	case stream.KindNearest:
		return columnsBatch(schema, g.items, asBytes(g.obs), asBytes(g.ref), asBytes(g.metres))
	case stream.KindKNearest:
		n := g.kColumns()
		return columnsBatch(schema, n, asBytes(g.obs), asBytes(g.rank), asBytes(g.ref[:n]), asBytes(g.metres[:n]))
	case stream.KindWithinCounts:
		g.obsColumn(func(int) int { return 1 })
		return columnsBatch(schema, g.items, asBytes(g.obs), asBytes(g.counts))
	}
	n := g.obsColumn(func(j int) int { return int(g.counts[j]) })
	return columnsBatch(schema, n, asBytes(g.obs), asBytes(g.ref), asBytes(g.metres))
}

// obsColumn fills g.obs with each item's index, rows(j) times for item
// j, and returns the rows.
func (g *answerGroup) obsColumn(rows func(j int) int) int {
	g.obs = g.obs[:0]
	for j := range g.items {
		for range rows(j) {
			g.obs = append(g.obs, int64(g.base+j))
		}
	}
	return len(g.obs)
}

// kColumns lays the k-nearest answers out as rows: the obs_index and rank
// columns, and ref and metres packed where an item has fewer than k
// (--max-m; until the first such item they are in place); it returns the
// rows.
func (g *answerGroup) kColumns() int {
	n := 0
	for _, rows := range g.rows[:g.items] {
		n += int(rows)
	}
	g.obs, g.rank = grow(g.obs, n), grow(g.rank, n)
	e := 0
	for j := range g.items {
		rows, from := int(g.rows[j]), j*g.k
		if e != from {
			copy(g.ref[e:e+rows], g.ref[from:from+rows])
			copy(g.metres[e:e+rows], g.metres[from:from+rows])
		}
		obs, rank := g.obs[e:e+rows], g.rank[e:e+rows]
		for r := range obs {
			obs[r], rank[r] = int64(g.base+j), int32(r+1)
		}
		e += rows
	}
	return n
}

// columnsBatch is a batch of n rows of fixed-width columns held in cols
// (fixedBatch's too, so every writer's batches are encoded the same).
func columnsBatch(schema *arrow.Schema, n int, cols ...[]byte) arrow.RecordBatch {
	arrays := make([]arrow.Array, len(cols))
	for c, f := range schema.Fields() {
		data := array.NewData(f.Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(cols[c])}, nil, 0, 0)
		arrays[c] = array.MakeFromData(data)
		data.Release()
	}
	rec := array.NewRecordBatch(schema, arrays, int64(n))
	for _, a := range arrays {
		a.Release()
	}
	return rec
}

// asBytes is s's memory as bytes.
func asBytes[T any](s []T) []byte {
	var zero T
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// answerFields are the columns of kind's answers, as today's writers
// name them.
func answerFields(kind stream.AnswerKind) []arrow.Field {
	switch kind {
	case stream.KindKNearest:
		return []arrow.Field{obsIndexField, {Name: "rank", Type: arrow.PrimitiveTypes.Int32}, refIndexField, metresField}
	case stream.KindWithinCounts:
		return []arrow.Field{obsIndexField, {Name: "count", Type: arrow.PrimitiveTypes.Uint32}}
	}
	return []arrow.Field{obsIndexField, refIndexField, metresField}
}

// bytesPerItem estimates a batch's memory an observation while it is
// encoded: its copy (12 or 20 bytes an answer), the batch's columns
// (24 an answer for k nearest), the encoding (about 13-17) and the
// encoder's pages; it bounds the batches held at once.
func bytesPerItem(kind stream.AnswerKind, k int) int {
	if kind == stream.KindKNearest {
		return 64 * k
	}
	return 64
}
