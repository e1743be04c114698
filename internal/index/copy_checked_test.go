package index

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"
)

// CopyChecked copies the columns, latitude then longitude, and refuses
// the first bad point with CheckValues' error, in either precision.
func TestCopyChecked(t *testing.T) {
	const n = 3*memoryBoundBlock + 77
	for _, bad := range []int{-1, 0, 5, memoryBoundBlock + 3, n - 1} {
		lat, lon := make([]float64, n), make([]float64, n)
		for i := range lat {
			lat[i], lon[i] = math.Sin(float64(i))*1.5, math.Cos(float64(i))*3
		}
		if bad >= 0 {
			lon[bad] = math.NaN()
			lat[min(n-1, bad+memoryBoundBlock)] = 2 // a later bad point, in another block
		}
		lat32, lon32 := make([]float32, n), make([]float32, n)
		for i := range lat {
			lat32[i], lon32[i] = float32(lat[i]), float32(lon[i])
		}
		for _, p := range []Points{Radians64(lat, lon), Radians32(lat32, lon32)} {
			want := p.CheckValues("obs", 10)
			var got error
			if p.Is32() {
				dst := make([]float32, 2*n)
				got = p.CopyChecked(unsafe.Pointer(&dst[0]), "obs", 10)
				if want == nil && (!slices.Equal(dst[:n], lat32) || !slices.Equal(dst[n:], lon32)) {
					t.Fatalf("float32: the copy differs")
				}
			} else {
				dst := make([]float64, 2*n)
				got = p.CopyChecked(unsafe.Pointer(&dst[0]), "obs", 10)
				if want == nil && (!slices.Equal(dst[:n], lat) || !slices.Equal(dst[n:], lon)) {
					t.Fatalf("float64: the copy differs")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("bad point %d, float32 %v: %v, want %v", bad, p.Is32(), got, want)
			}
		}
	}
}
