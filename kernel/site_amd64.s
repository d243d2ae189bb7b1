#include "textflag.h"

// func fpWalk(pcs []uintptr) int
//
// fpWalk stores the return addresses of its caller's caller and the frames
// above it, following the frame-pointer chain that Go keeps on amd64, until
// pcs is full or the chain ends (a zero frame pointer at the stack's base).
// It has no frame of its own, so BP is still its caller's frame pointer.
TEXT ·fpWalk(SB), NOSPLIT, $0-32
	MOVQ BP, AX
	MOVQ pcs_base+0(FP), DI
	MOVQ pcs_len+8(FP), CX
	XORQ DX, DX
loop:
	TESTQ AX, AX
	JZ done
	CMPQ DX, CX
	JGE done
	MOVQ 8(AX), BX
	MOVQ BX, (DI)(DX*8)
	INCQ DX
	MOVQ 0(AX), AX
	JMP loop
done:
	MOVQ DX, ret+24(FP)
	RET
