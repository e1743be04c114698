//go:build amd64 && !purego

#include "textflag.h"
#include "vec_amd64.h"

DATA poolK<>+0(SB)/8, $0 // the lanes' places
DATA poolK<>+8(SB)/8, $1
DATA poolK<>+16(SB)/8, $2
DATA poolK<>+24(SB)/8, $3
DATA poolK<>+32(SB)/8, $4                  // the step
DATA poolK<>+40(SB)/8, $0x7ff0000000000000 // +Inf
DATA poolK<>+48(SB)/8, $0xfff0000000000000 // -Inf
DATA poolK<>+56(SB)/8, $0x3d719799812dea11 // faceDomEps, 1e-12
GLOBL poolK<>(SB), RODATA|NOPTR, $64

// func poolChordsAVX2(p *[3]float64, x, y, z, d2 *float64, n int, least *[4]float64, at *[4]int64)
//
// The squared chords from p to the n references x, y, z (n a multiple of
// 4) into d2, rounded as chord2 rounds them: ((dx*dx + dy*dy) + dz*dz);
// and lane by lane (the places k = lane mod 4) the least and its first
// place. Registers: Y0-Y2 p, Y3-Y5 the differences, then Y3 the chords,
// Y6 the lanes that improve, Y7 the least, Y8 the places, Y9 the least's
// places, Y10 the step.
TEXT ·poolChordsAVX2(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), AX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ z+24(FP), DX
	MOVQ d2+32(FP), R8
	MOVQ n+40(FP), CX
	BROADCAST3(0, AX, Y0, Y1, Y2)
	VBROADCASTSD poolK<>+40(SB), Y7
	VMOVDQU      poolK<>+0(SB), Y8
	VPXOR        Y9, Y9, Y9
	VPBROADCASTQ poolK<>+32(SB), Y10
	XORQ R9, R9

chords:
	CMPQ      R9, CX
	JGE       least
	VMOVUPD   (SI)(R9*8), Y3
	VMOVUPD   (DI)(R9*8), Y4
	VMOVUPD   (DX)(R9*8), Y5
	VSUBPD    Y3, Y0, Y3
	VSUBPD    Y4, Y1, Y4
	VSUBPD    Y5, Y2, Y5
	VMULPD    Y3, Y3, Y3
	VMULPD    Y4, Y4, Y4
	VADDPD    Y4, Y3, Y3
	VMULPD    Y5, Y5, Y5
	VADDPD    Y5, Y3, Y3
	VMOVUPD   Y3, (R8)(R9*8)
	VCMPPD    $0x11, Y7, Y3, Y6
	VBLENDVPD Y6, Y3, Y7, Y7
	VBLENDVPD Y6, Y8, Y9, Y9
	VPADDQ    Y10, Y8, Y8
	ADDQ      $4, R9
	JMP       chords

least:
	MOVQ    least+48(FP), AX
	MOVQ    at+56(FP), BX
	VMOVUPD Y7, (AX)
	VMOVDQU Y9, (BX)
	VZEROUPPER
	RET

// CORNER_BEATEN sets DST to the lanes of references Y0-Y2 beaten at the
// corner whose x, y, z lanes are at XYZ(AX) and beaten dot product at
// BEATEN(AX): ((cx*x + cy*y) + cz*z) < beaten, each product rounded. Y5,
// Y6 scratch.
#define CORNER_BEATEN(XYZ, BEATEN, DST) \
	VMULPD XYZ(AX), Y0, Y5         \
	VMULPD XYZ+32(AX), Y1, Y6      \
	VADDPD Y6, Y5, Y5              \
	VMULPD XYZ+64(AX), Y2, Y6      \
	VADDPD Y6, Y5, Y5              \
	VCMPPD $0x11, BEATEN(AX), Y5, DST

// func poolSurvivorsAVX2(c *facePoolCell, x, y, z, d2 *float64, n int, out *int32) int
//
// The places of the n references x, y, z (n a multiple of 4, their squared
// chords from the cell's centre in d2) within the cell's ball that are
// not beaten at every corner, in order, into out; returns how many. The
// cell c (facePoolCell): corner k's x, y, z lanes at 96k, 96k+32, 96k+64;
// the beaten dot products at 384+32k; the ball's squared chord at 512. A
// dot product is ((cx*x + cy*y) + cz*z), each product rounded, as
// poolSurvivorsGo computes it. Registers: Y0-Y2 the references, Y3 their
// chords, Y4 in the ball, Y5 a dot product, Y6 scratch, Y7 beaten at
// every corner so far.
TEXT ·poolSurvivorsAVX2(SB), NOSPLIT, $0-64
	MOVQ c+0(FP), AX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ z+24(FP), DX
	MOVQ d2+32(FP), R8
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), R10
	XORQ R9, R9
	XORQ R11, R11

group:
	CMPQ      R9, CX
	JGE       done
	VMOVUPD   (R8)(R9*8), Y3
	VCMPPD    $0x12, 512(AX), Y3, Y4
	VMOVMSKPD Y4, BX
	TESTQ     BX, BX
	JZ        next
	VMOVUPD   (SI)(R9*8), Y0
	VMOVUPD   (DI)(R9*8), Y1
	VMOVUPD   (DX)(R9*8), Y2

	CORNER_BEATEN(0, 384, Y7)
	CORNER_BEATEN(96, 416, Y6)
	VANDPD Y6, Y7, Y7
	CORNER_BEATEN(192, 448, Y6)
	VANDPD Y6, Y7, Y7
	CORNER_BEATEN(288, 480, Y6)
	VANDPD Y6, Y7, Y7

	VANDNPD   Y4, Y7, Y7
	VMOVMSKPD Y7, BX

bits:
	TESTQ BX, BX
	JZ    next
	BSFQ  BX, R12
	LEAQ  (R9)(R12*1), R13
	MOVL  R13, (R10)(R11*4)
	INCQ  R11
	BTRQ  R12, BX
	JMP   bits

next:
	ADDQ $4, R9
	JMP  group

done:
	MOVQ R11, ret+56(FP)
	VZEROUPPER
	RET

// KEPT_BEATS sets DST to the lanes of the kept group at R9 whose corner
// dots at CORNER(DI) beat the survivor's, DOT, by more than faceDomEps
// (Y15), as beats tests it.
#define KEPT_BEATS(CORNER, DOT, DST) \
	VMOVUPD CORNER(DI)(R9*1), DST \
	VSUBPD  DOT, DST, DST         \
	VCMPPD  $0x1e, Y15, DST, DST

// func secondFilterAVX2(surv *faceSurvivor, n, stop int, kept *[4][36]float64, out *int32) int
//
// secondFilter's test for the n survivors from surv (48 bytes each, the
// corner dots at 16): the places of those that no kept one beats at every
// corner by faceDomEps (as beats tests it, the same bits), in order, into
// out, stopping at stop (at most 36); returns how many. kept holds the
// kept ones' corner dots, corner by corner, a group of four lanes at a
// time, a group's free lanes -Inf (beating nothing). Registers: Y0-Y3 the
// survivor's dots, Y4 the lanes beating it so far, Y5 scratch, Y14 -Inf,
// Y15 faceDomEps.
TEXT ·secondFilterAVX2(SB), NOSPLIT, $0-48
	MOVQ surv+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ stop+16(FP), DX
	MOVQ kept+24(FP), DI
	MOVQ out+32(FP), R10
	VBROADCASTSD poolK<>+48(SB), Y14
	VBROADCASTSD poolK<>+56(SB), Y15
	XORQ R8, R8
	XORQ R11, R11

survivor:
	CMPQ R8, CX
	JGE  kept
	VBROADCASTSD 16(SI), Y0
	VBROADCASTSD 24(SI), Y1
	VBROADCASTSD 32(SI), Y2
	VBROADCASTSD 40(SI), Y3
	LEAQ 3(R11), R12
	SHRQ $2, R12
	SHLQ $5, R12
	XORQ R9, R9

group:
	CMPQ      R9, R12
	JGE       keep
	KEPT_BEATS(0, Y0, Y4)
	KEPT_BEATS(288, Y1, Y5)
	VANDPD    Y5, Y4, Y4
	KEPT_BEATS(576, Y2, Y5)
	VANDPD    Y5, Y4, Y4
	KEPT_BEATS(864, Y3, Y5)
	VANDPD    Y5, Y4, Y4
	VMOVMSKPD Y4, BX
	TESTQ     BX, BX
	JNZ       beaten
	ADDQ      $32, R9
	JMP       group

keep:
	LEAQ    0(R11*8), R13
	TESTQ   $3, R11
	JNZ     put
	VMOVUPD Y14, 0(DI)(R13*1)
	VMOVUPD Y14, 288(DI)(R13*1)
	VMOVUPD Y14, 576(DI)(R13*1)
	VMOVUPD Y14, 864(DI)(R13*1)

put:
	VMOVSD X0, 0(DI)(R13*1)
	VMOVSD X1, 288(DI)(R13*1)
	VMOVSD X2, 576(DI)(R13*1)
	VMOVSD X3, 864(DI)(R13*1)
	MOVL   R8, (R10)(R11*4)
	INCQ   R11
	CMPQ   R11, DX
	JGE    kept

beaten:
	ADDQ $48, SI
	INCQ R8
	JMP  survivor

kept:
	MOVQ R11, ret+40(FP)
	VZEROUPPER
	RET
