//go:build amd64 && !purego

#include "textflag.h"
#include "vec_amd64.h"

// func dot3AVX2(o *[9]float64, s *[3]float64, rx, ry, rz *float64, n int) int
//
// Dot products of three observations (o: x0 y0 z0 x1 y1 z1 x2 y2 z2) with
// references rx/ry/rz[0:n], four references at a time, as
// fma(x, rx, fma(y, ry, z*rz)). Returns how many references it passed
// (a multiple of 4) before the first group of four in which some dot product
// exceeds that observation's runner-up s[k]; the caller ranks that group.
TEXT ·dot3AVX2(SB), NOSPLIT, $0-56
	MOVQ o+0(FP), AX
	MOVQ s+8(FP), BX
	MOVQ rx+16(FP), SI
	MOVQ ry+24(FP), DI
	MOVQ rz+32(FP), DX
	MOVQ n+40(FP), CX
	BROADCAST3(0, AX, Y0, Y1, Y2)
	BROADCAST3(24, AX, Y3, Y4, Y5)
	BROADCAST3(48, AX, Y6, Y7, Y8)
	BROADCAST3(0, BX, Y9, Y10, Y11)
	XORQ R8, R8

loop:
	LEAQ 4(R8), R9
	CMPQ R9, CX
	JGT  done
	VMOVUPD (SI)(R8*8), Y12
	VMOVUPD (DI)(R8*8), Y13
	VMOVUPD (DX)(R8*8), Y14

	VMULPD      Y14, Y2, Y15
	VFMADD231PD Y13, Y1, Y15
	VFMADD231PD Y12, Y0, Y15
	VCMPPD      $0x1e, Y9, Y15, Y15
	VMOVMSKPD   Y15, R10

	VMULPD      Y14, Y5, Y15
	VFMADD231PD Y13, Y4, Y15
	VFMADD231PD Y12, Y3, Y15
	VCMPPD      $0x1e, Y10, Y15, Y15
	VMOVMSKPD   Y15, R11
	ORQ         R11, R10

	VMULPD      Y14, Y8, Y15
	VFMADD231PD Y13, Y7, Y15
	VFMADD231PD Y12, Y6, Y15
	VCMPPD      $0x1e, Y11, Y15, Y15
	VMOVMSKPD   Y15, R11
	ORQ         R11, R10

	TESTQ R10, R10
	JNZ   done
	MOVQ  R9, R8
	JMP   loop

done:
	VZEROUPPER
	MOVQ R8, ret+48(FP)
	RET

// The lane kernels' constants: the lanes' first places (0, 1, 2, 3), the
// step between groups of four, -Inf. Loaded by VEX instructions only: a
// legacy-SSE move into an XMM register after YMM ones were touched costs a
// state transition at every call.
DATA lanesK<>+0(SB)/8, $0
DATA lanesK<>+8(SB)/8, $1
DATA lanesK<>+16(SB)/8, $2
DATA lanesK<>+24(SB)/8, $3
DATA lanesK<>+32(SB)/8, $4
DATA lanesK<>+40(SB)/8, $0xfff0000000000000
GLOBL lanesK<>(SB), RODATA|NOPTR, $48

// LANE_OBS ranks one observation (its z, y, x at those offsets from AX)
// against the references in Y0-Y2 (indices Y3): Y4 the dot product, Y5
// scratch; BEST, SECOND, IDX its lane state.
#define LANE_OBS(OZ, OY, OX, BEST, SECOND, IDX) \
	VBROADCASTSD OZ(AX), Y5           \
	VMULPD       Y2, Y5, Y4           \
	VBROADCASTSD OY(AX), Y5           \
	VFMADD231PD  Y1, Y5, Y4           \
	VBROADCASTSD OX(AX), Y5           \
	VFMADD231PD  Y0, Y5, Y4           \
	VMINPD       Y4, BEST, Y5         \
	VMAXPD       SECOND, Y5, SECOND   \
	VCMPPD       $0x1e, BEST, Y4, Y5  \
	VMAXPD       BEST, Y4, BEST       \
	VBLENDVPD    Y5, Y3, IDX, IDX

// func lanes3AVX2(o *[9]float64, rx, ry, rz *float64, groups int, st *lanes3)
//
// From the reset state (bests and seconds -Inf, indices 0), dot products of
// three observations with references rx/ry/rz[0:4*groups], kept lane by
// lane (lane l sees references l, l+4, ...): st.best the largest, st.second
// the second largest, st.idx the reference of the largest (the first on
// equal dot products). No branches: min, max and a blend a pair. A
// reference with NaN coordinates (tile padding) changes nothing: the
// operands are ordered so that min and max return the state. Registers:
// Y0-Y2 the references, Y3 their indices, Y4 the dot product, Y5 scratch,
// Y6-Y14 the state (best, second, idx of each observation), Y15 the index
// step.
TEXT ·lanes3AVX2(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), AX
	MOVQ rx+8(FP), SI
	MOVQ ry+16(FP), DI
	MOVQ rz+24(FP), DX
	MOVQ groups+32(FP), CX
	MOVQ st+40(FP), BX
	VPBROADCASTQ lanesK<>+40(SB), Y6
	VMOVDQA Y6, Y7
	VMOVDQA Y6, Y8
	VMOVDQA Y6, Y9
	VMOVDQA Y6, Y10
	VMOVDQA Y6, Y11
	VPXOR   Y12, Y12, Y12
	VPXOR   Y13, Y13, Y13
	VPXOR   Y14, Y14, Y14
	VMOVDQU lanesK<>+0(SB), Y3
	VPBROADCASTQ lanesK<>+32(SB), Y15
	XORQ R8, R8

loop3:
	CMPQ CX, $0
	JLE  done3
	VMOVUPD (SI)(R8*8), Y0
	VMOVUPD (DI)(R8*8), Y1
	VMOVUPD (DX)(R8*8), Y2

	LANE_OBS(16, 8, 0, Y6, Y9, Y12)
	LANE_OBS(40, 32, 24, Y7, Y10, Y13)
	LANE_OBS(64, 56, 48, Y8, Y11, Y14)

	VPADDQ Y15, Y3, Y3
	ADDQ   $4, R8
	DECQ   CX
	JMP    loop3

done3:
	VMOVUPD Y6, 0(BX)
	VMOVUPD Y7, 32(BX)
	VMOVUPD Y8, 64(BX)
	VMOVUPD Y9, 96(BX)
	VMOVUPD Y10, 128(BX)
	VMOVUPD Y11, 160(BX)
	VMOVDQU Y12, 192(BX)
	VMOVDQU Y13, 224(BX)
	VMOVDQU Y14, 256(BX)
	VZEROUPPER
	RET

// func lanes1AVX2(o *[3]float64, blocks *faceBlock, n int) (best, runup float64, idx int)
//
// lanes3AVX2 for one observation o (x, y, z) against n blocks of a face
// cell's list (128 bytes each: x[4], y[4], z[4], id[4], orig[4]), its lanes folded
// as lanes1.result folds them: the largest dot product, the largest of the
// rest and the winner's place in the list (the lowest lane on equal
// bests). A NaN (padding) candidate changes nothing. Registers: Y0-Y2 the
// observation, Y3 the candidates' places, Y4 the dot product, Y5 scratch,
// Y6 best, Y7 second, Y8 idx, Y9-Y11 the block, Y14 the lane numbers, Y15
// the step.
TEXT ·lanes1AVX2(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), AX
	MOVQ blocks+8(FP), SI
	MOVQ n+16(FP), CX
	BROADCAST3(0, AX, Y0, Y1, Y2)
	VPBROADCASTQ lanesK<>+40(SB), Y6
	VMOVDQA Y6, Y7
	VPXOR   Y8, Y8, Y8
	VMOVDQU lanesK<>+0(SB), Y3
	VMOVDQA Y3, Y14
	VPBROADCASTQ lanesK<>+32(SB), Y15

loop1:
	CMPQ CX, $0
	JLE  fold1
	VMOVUPD 0(SI), Y9
	VMOVUPD 32(SI), Y10
	VMOVUPD 64(SI), Y11
	VMULPD      Y11, Y2, Y4
	VFMADD231PD Y10, Y1, Y4
	VFMADD231PD Y9, Y0, Y4
	VMINPD      Y4, Y6, Y5
	VMAXPD      Y7, Y5, Y7
	VCMPPD      $0x1e, Y6, Y4, Y5
	VMAXPD      Y6, Y4, Y6
	VBLENDVPD   Y5, Y3, Y8, Y8
	VPADDQ Y15, Y3, Y3
	ADDQ   $128, SI
	DECQ   CX
	JMP    loop1

fold1:
	// best: the largest lane, in every lane of Y10; w its lowest lane.
	VEXTRACTF128 $1, Y6, X9
	VMAXPD       X9, X6, X10
	VPERMILPD    $1, X10, X11
	VMAXPD       X11, X10, X10
	VMOVDDUP     X10, X10
	VINSERTF128  $1, X10, Y10, Y10
	VCMPPD       $0, Y10, Y6, Y11
	VMOVMSKPD    Y11, R9
	BSFQ         R9, R9
	// runup: the largest of lane w's second and the other lanes' bests.
	VMOVQ        R9, X12
	VPBROADCASTQ X12, Y12
	VPCMPEQQ     Y12, Y14, Y13
	VBLENDVPD    Y13, Y7, Y6, Y12
	VEXTRACTF128 $1, Y12, X9
	VMAXPD       X9, X12, X12
	VPERMILPD    $1, X12, X11
	VMAXPD       X11, X12, X12
	// idx: lane w of Y8.
	VPAND        Y13, Y8, Y11
	VEXTRACTI128 $1, Y11, X9
	VPOR         X9, X11, X11
	VPSHUFD      $0x4e, X11, X9
	VPOR         X9, X11, X11
	VMOVQ        X11, R10
	VZEROUPPER
	MOVSD X10, best+24(FP)
	MOVSD X12, runup+32(FP)
	MOVQ  R10, idx+40(FP)
	RET

// func faceTop4AVX2(u *[12]float64, side int, half float64, s *faceSpots)
//
// faceIndex.top of four unit vectors u (x, then y, then z), the face's
// choice in masks: a = 0 where |x| >= |y| and |x| >= |z|, else 1 where
// |y| >= |z|, else 2; m, u, v the axis's coordinate and the next two;
// uf = (u/|m| + 1) half, each step rounded as top rounds it; the cell
// place (f side + min(trunc uf, side-1)) side + min(trunc vf, side-1),
// f = 2a + (m < 0). s: places (4 int32) at 0, uf at 16, vf at 48.
// Registers: Y0-Y2 x, y, z; Y3-Y5 their magnitudes; Y6 a = 0; Y7 |y| >=
// |z|; Y8 m, then 1/|m|; Y9 u, then uf; Y10 v, then vf; Y11 ones; Y12
// twos, then side; Y13 f; Y14 scratch, then half; Y15 the magnitude mask.
TEXT ·faceTop4AVX2(SB), NOSPLIT, $0-32
	MOVQ u+0(FP), AX
	MOVQ side+8(FP), BX
	MOVQ s+24(FP), DI
	VMOVUPD      0(AX), Y0
	VMOVUPD      32(AX), Y1
	VMOVUPD      64(AX), Y2
	VBROADCASTSD topK<>+0(SB), Y15
	VBROADCASTSD topK<>+8(SB), Y11
	VBROADCASTSD topK<>+16(SB), Y12
	VANDPD       Y15, Y0, Y3
	VANDPD       Y15, Y1, Y4
	VANDPD       Y15, Y2, Y5
	VCMPPD       $0x1d, Y4, Y3, Y6
	VCMPPD       $0x1d, Y5, Y3, Y7
	VANDPD       Y7, Y6, Y6
	VCMPPD       $0x1d, Y5, Y4, Y7
	VBLENDVPD    Y7, Y1, Y2, Y8
	VBLENDVPD    Y6, Y0, Y8, Y8
	VBLENDVPD    Y7, Y2, Y0, Y9
	VBLENDVPD    Y6, Y1, Y9, Y9
	VBLENDVPD    Y7, Y0, Y1, Y10
	VBLENDVPD    Y6, Y2, Y10, Y10

	// f = 2a + (m < 0), in doubles.
	VBLENDVPD Y7, Y11, Y12, Y13
	VXORPD    Y14, Y14, Y14
	VBLENDVPD Y6, Y14, Y13, Y13
	VADDPD    Y13, Y13, Y13
	VCMPPD    $0x11, Y14, Y8, Y14
	VANDPD    Y11, Y14, Y14
	VADDPD    Y14, Y13, Y13

	// uf and vf.
	VANDPD       Y15, Y8, Y8
	VDIVPD       Y8, Y11, Y8
	VBROADCASTSD half+16(FP), Y14
	VMULPD       Y8, Y9, Y9
	VADDPD       Y11, Y9, Y9
	VMULPD       Y14, Y9, Y9
	VMULPD       Y8, Y10, Y10
	VADDPD       Y11, Y10, Y10
	VMULPD       Y14, Y10, Y10
	VMOVUPD      Y9, 16(DI)
	VMOVUPD      Y10, 48(DI)

	// The place, in int32 lanes.
	VCVTTPD2DQY  Y9, X9
	VCVTTPD2DQY  Y10, X10
	VCVTTPD2DQY  Y13, X13
	VMOVQ        BX, X12
	VPBROADCASTD X12, X12
	VPCMPEQD     X11, X11, X11
	VPADDD       X11, X12, X11
	VPMINSD      X11, X9, X9
	VPMINSD      X11, X10, X10
	VPMULLD      X12, X13, X13
	VPADDD       X9, X13, X13
	VPMULLD      X12, X13, X13
	VPADDD       X10, X13, X13
	VMOVDQU      X13, 0(DI)
	VZEROUPPER
	RET

DATA topK<>+0(SB)/8, $0x7fffffffffffffff // the magnitude mask
DATA topK<>+8(SB)/8, $0x3ff0000000000000 // 1
DATA topK<>+16(SB)/8, $0x4000000000000000 // 2
GLOBL topK<>(SB), RODATA|NOPTR, $24

// func prefetchBlocks(p *faceBlock, n int)
//
// Asks for the cache lines of n blocks from p (PREFETCHT0), so that a
// batch of observations' lists load while earlier ones rank.
TEXT ·prefetchBlocks(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHLQ $7, CX
	ADDQ SI, CX

pf:
	CMPQ SI, CX
	JGE  pfdone
	PREFETCHT0 (SI)
	ADDQ $64, SI
	JMP  pf

pfdone:
	RET

// func prefetchHead(p *faceHead)
//
// Asks for p's cache line (PREFETCHT0).
TEXT ·prefetchHead(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), SI
	PREFETCHT0 (SI)
	RET
