//go:build amd64 && !purego && !amd64.v3

package index

//go:noescape
func unit4AVX2(lat, lon *[4]float64, out *[12]float64)

// Unit4 is unit of four points (latitudes and longitudes in radians,
// within the checked ranges): out holds their x, then y, then z, the same
// bits as unit gives, through unit4AVX2 where the CPU has AVX2.
func Unit4(lat, lon *[4]float64, out *[12]float64) {
	if HaveAVX2FMA {
		unit4AVX2(lat, lon, out)
		return
	}
	Unit4Go(lat, lon, out)
}

//go:noescape
func chordToAngle4AVX2(d2, out *[4]float64) (slow int)

// ChordToAngle4 is ChordToAngle of four squared chords, the same bits,
// through chordToAngle4AVX2 where the CPU has AVX2 (the lanes it leaves,
// angles past 60 degrees, here).
func ChordToAngle4(d2, out *[4]float64) {
	if !HaveAVX2FMA {
		chordToAngle4Go(d2, out)
		return
	}
	slow := chordToAngle4AVX2(d2, out)
	for e := 0; slow != 0; e, slow = e+1, slow>>1 {
		if slow&1 != 0 {
			out[e] = ChordToAngle(d2[e])
		}
	}
}
