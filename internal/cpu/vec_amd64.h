// Macros the AVX2 routines of this package share (#include "vec_amd64.h").

// BROADCAST3 broadcasts the three float64s from OFF(BASE) on, a point's
// x, y, z (or any three in a row), to every lane of A, B and C.
#define BROADCAST3(OFF, BASE, A, B, C) \
	VBROADCASTSD OFF+0(BASE), A \
	VBROADCASTSD OFF+8(BASE), B \
	VBROADCASTSD OFF+16(BASE), C
