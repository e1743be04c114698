//go:build amd64 && !purego

#include "textflag.h"

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
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	VBROADCASTSD 32(AX), Y4
	VBROADCASTSD 40(AX), Y5
	VBROADCASTSD 48(AX), Y6
	VBROADCASTSD 56(AX), Y7
	VBROADCASTSD 64(AX), Y8
	VBROADCASTSD 0(BX), Y9
	VBROADCASTSD 8(BX), Y10
	VBROADCASTSD 16(BX), Y11
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

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET
