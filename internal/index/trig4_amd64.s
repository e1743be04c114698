//go:build amd64 && !purego && !amd64.v3

#include "textflag.h"

// Four points at a time, the same bits as the scalar code: math.Sincos's
// constants (sin.go, sincos.go) and the masks unit4AVX2 uses, then
// fdlibm's asin's for chordToAngle4AVX2.
DATA unitK<>+0(SB)/8, $0x3ff45f306dc9c883   // 4/Pi
DATA unitK<>+8(SB)/8, $0x3fe921fb40000000   // PI4A
DATA unitK<>+16(SB)/8, $0x3e64442d00000000  // PI4B
DATA unitK<>+24(SB)/8, $0x3ce8469898cc5170  // PI4C
DATA unitK<>+32(SB)/8, $0xbda8fa49a0861a9b  // _cos[0..5]
DATA unitK<>+40(SB)/8, $0x3e21ee9d7b4e3f05
DATA unitK<>+48(SB)/8, $0xbe927e4f7eac4bc6
DATA unitK<>+56(SB)/8, $0x3efa01a019c844f5
DATA unitK<>+64(SB)/8, $0xbf56c16c16c14f91
DATA unitK<>+72(SB)/8, $0x3fa555555555554b
DATA unitK<>+80(SB)/8, $0x3de5d8fd1fd19ccd  // _sin[0..5]
DATA unitK<>+88(SB)/8, $0xbe5ae5e5a9291f5d
DATA unitK<>+96(SB)/8, $0x3ec71de3567d48a1
DATA unitK<>+104(SB)/8, $0xbf2a01a019bfdf03
DATA unitK<>+112(SB)/8, $0x3f8111111110f7d0
DATA unitK<>+120(SB)/8, $0xbfc5555555555548
DATA unitK<>+128(SB)/8, $0x3ff0000000000000 // 1
DATA unitK<>+136(SB)/8, $0x3fe0000000000000 // 0.5
DATA unitK<>+144(SB)/8, $0x7fffffffffffffff // |x|
DATA unitK<>+152(SB)/8, $0x8000000000000000 // sign bit
DATA unitK<>+160(SB)/8, $2
DATA unitK<>+168(SB)/8, $4
DATA unitK<>+176(SB)/4, $1
DATA unitK<>+180(SB)/4, $7
// fdlibm's asin (internal/fdlibm): pS0..pS5, qS1..qS4, 2^-26.
DATA unitK<>+184(SB)/8, $0x3fc5555555555555
DATA unitK<>+192(SB)/8, $0xbfd4d61203eb6f7d
DATA unitK<>+200(SB)/8, $0x3fc9c1550e884455
DATA unitK<>+208(SB)/8, $0xbfa48228b5688f3b
DATA unitK<>+216(SB)/8, $0x3f49efe07501b288
DATA unitK<>+224(SB)/8, $0x3f023de10dfdf709
DATA unitK<>+232(SB)/8, $0xc0033a271c8a2d4b
DATA unitK<>+240(SB)/8, $0x40002ae59c598ac8
DATA unitK<>+248(SB)/8, $0xbfe6066c1b8d0159
DATA unitK<>+256(SB)/8, $0x3fb3b8c5b12e9282
DATA unitK<>+264(SB)/8, $0x3e50000000000000
GLOBL unitK<>(SB), RODATA|NOPTR, $272

#define KD(off, reg) VBROADCASTSD unitK<>+off(SB), reg

// POLY_STEP is p = (p + c) * zz, zz in Y9.
#define POLY_STEP(off, P) KD(off, Y6); VADDPD Y6, P, P; VMULPD Y9, P, P

// SINCOS sets S, C to math.Sincos of the four lanes of IN (finite, |x| <
// 2^29), the same operations in the same order, none fused, so the same
// bits as math.Sincos built for GOAMD64 below v3 (above it, the compiler
// fuses and this file is not built). Scratch: Y1-Y9.
#define SINCOS(IN, S, C) \
	KD(144, Y1); VANDPD IN, Y1, Y1; \
	KD(152, Y2); VANDPD IN, Y2, Y2; \
	KD(0, Y3); VMULPD Y3, Y1, Y3; \
	VCVTTPD2DQY Y3, X4; \
	VPBROADCASTD unitK<>+176(SB), X5; VPAND X5, X4, X5; VPADDD X5, X4, X4; \
	VCVTDQ2PD X4, Y5; \
	VPBROADCASTD unitK<>+180(SB), X6; VPAND X6, X4, X4; \
	VPMOVZXDQ X4, Y8; \
	KD(8, Y6); VMULPD Y6, Y5, Y6; VSUBPD Y6, Y1, Y7; \
	KD(16, Y6); VMULPD Y6, Y5, Y6; VSUBPD Y6, Y7, Y7; \
	KD(24, Y6); VMULPD Y6, Y5, Y6; VSUBPD Y6, Y7, Y7; \
	VMULPD Y7, Y7, Y9; \
	KD(32, C); VMULPD Y9, C, C; \
	POLY_STEP(40, C); POLY_STEP(48, C); POLY_STEP(56, C); POLY_STEP(64, C); \
	KD(72, Y6); VADDPD Y6, C, C; \
	VMULPD Y9, Y9, Y6; VMULPD Y6, C, C; \
	KD(136, Y6); VMULPD Y9, Y6, Y6; KD(128, Y3); VSUBPD Y6, Y3, Y3; VADDPD C, Y3, C; \
	KD(80, S); VMULPD Y9, S, S; \
	POLY_STEP(88, S); POLY_STEP(96, S); POLY_STEP(104, S); POLY_STEP(112, S); \
	KD(120, Y6); VADDPD Y6, S, S; \
	VMULPD Y9, Y7, Y6; VMULPD Y6, S, S; VADDPD S, Y7, S; \
	VPBROADCASTQ unitK<>+160(SB), Y3; VPAND Y3, Y8, Y6; VPCMPEQQ Y3, Y6, Y6; \
	VBLENDVPD Y6, C, S, Y3; VBLENDVPD Y6, S, C, C; VMOVAPD Y3, S; \
	VPBROADCASTQ unitK<>+168(SB), Y3; VPAND Y3, Y8, Y3; VPSLLQ $61, Y3, Y3; \
	VPXOR Y3, Y2, Y2; VXORPD Y2, S, S; \
	VPBROADCASTQ unitK<>+160(SB), Y6; VPAND Y6, Y8, Y6; VPSLLQ $62, Y6, Y6; \
	VPXOR Y3, Y6, Y6; VXORPD Y6, C, C

// func unit4AVX2(lat, lon *[4]float64, out *[12]float64)
//
// unit() of four points: out holds their x, then y, then z. The octant
// logic of math.Sincos in masks: an argument reduced to octant j (even,
// after math.Sincos maps odd ones up) swaps sine and cosine when j&2, flips
// the sine when j&4 (beside the argument's own sign), the cosine when one
// of j&2 and j&4.
TEXT ·unit4AVX2(SB), NOSPLIT, $0-24
	MOVQ lat+0(FP), AX
	MOVQ lon+8(FP), BX
	MOVQ out+16(FP), DI
	VMOVUPD (AX), Y0
	SINCOS(Y0, Y10, Y11)
	VMOVUPD (BX), Y0
	SINCOS(Y0, Y12, Y13)
	VMULPD Y13, Y11, Y14
	VMULPD Y12, Y11, Y15
	VMOVUPD Y14, 0(DI)
	VMOVUPD Y15, 32(DI)
	VMOVUPD Y10, 64(DI)
	VZEROUPPER
	RET

// ASIN_STEP is P = (P + c) * t, t in Y1.
#define ASIN_STEP(off, P) KD(off, Y6); VADDPD Y6, P, P; VMULPD Y1, P, P

// func chordToAngle4AVX2(d2, out *[4]float64) (slow int)
//
// ChordToAngle of four squared chords, the same bits, where asin's
// argument h = sqrt(d2)/2 is below 0.5 (fdlibm's first branch: h itself
// below 2^-26, else h + h p(t)/q(t), t = h^2); slow has bit k set for each
// lane k at or above it (or NaN), which the caller converts itself.
TEXT ·chordToAngle4AVX2(SB), NOSPLIT, $0-24
	MOVQ d2+0(FP), AX
	MOVQ out+8(FP), DI
	VMOVUPD (AX), Y0
	VSQRTPD Y0, Y0
	KD(136, Y6)
	VMULPD Y6, Y0, Y0
	VMULPD Y0, Y0, Y1
	KD(224, Y2)
	VMULPD Y1, Y2, Y2
	KD(216, Y6)
	VADDPD Y6, Y2, Y2
	VMULPD Y1, Y2, Y2
	ASIN_STEP(208, Y2)
	ASIN_STEP(200, Y2)
	ASIN_STEP(192, Y2)
	ASIN_STEP(184, Y2)
	KD(256, Y3)
	VMULPD Y1, Y3, Y3
	KD(248, Y6)
	VADDPD Y6, Y3, Y3
	VMULPD Y1, Y3, Y3
	ASIN_STEP(240, Y3)
	ASIN_STEP(232, Y3)
	KD(128, Y6)
	VADDPD Y6, Y3, Y3
	VDIVPD Y3, Y2, Y2
	VMULPD Y2, Y0, Y2
	VADDPD Y2, Y0, Y2
	KD(264, Y6)
	VCMPPD $1, Y6, Y0, Y4
	VBLENDVPD Y4, Y0, Y2, Y2
	VADDPD Y2, Y2, Y2
	VMOVUPD Y2, (DI)
	KD(136, Y6)
	VCMPPD $5, Y6, Y0, Y4
	VMOVMSKPD Y4, R8
	VZEROUPPER
	MOVQ R8, slow+16(FP)
	RET
