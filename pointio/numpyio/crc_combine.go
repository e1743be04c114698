package numpyio

// crc32Combine is the CRC-32 (IEEE) of a's bytes followed by b's, from
// their CRCs and b's length: zlib's crc32_combine, which shifts crcA
// through lenB zero bytes by squaring the CRC's shift operator. An archive
// member written in parts (an MPI rank each) gets its CRC without anyone
// reading the whole member back.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = 0xedb88320 // the reflected polynomial: one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		gf2Square(&even, &odd) // one zero byte, then 2, 4, ...
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

// gf2Times is the 32x32 bit matrix mat times vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	sum := uint32(0)
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat times mat.
func gf2Square(square, mat *[32]uint32) {
	for n := range mat {
		square[n] = gf2Times(mat, mat[n])
	}
}
