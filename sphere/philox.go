package sphere

import "math/bits"

// philox4x32 is the Philox4x32-10 counter-based generator (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123
// reference): ten rounds of multiply-xor over a 128-bit counter under a
// 64-bit key. Any point of a set is a pure function of (seed, index), so a
// GPU kernel draws the same points as this code, in any order and on any
// number of threads (internal/kernels/generate.cu is its twin).
func philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	const m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
	for r := 0; r < 10; r++ {
		if r > 0 {
			key[0] += w0
			key[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// uniforms are the two float64s in [0, 1), 53 random bits each, of point i
// of the stream (seed, stream).
func uniforms(i, seed, stream uint64) (u, v float64) {
	k := seed ^ stream
	r := philox4x32([4]uint32{uint32(i), uint32(i >> 32), 0, 0}, [2]uint32{uint32(k), uint32(k >> 32)})
	a := uint64(r[0])<<32 | uint64(r[1])
	b := uint64(r[2])<<32 | uint64(r[3])
	return float64(a>>11) * 0x1p-53, float64(b>>11) * 0x1p-53
}
