#include "textflag.h"

// func StoreDoorbell(p *uint64, v uint64)
//
// SFENCE drains the write-combining buffers (ring and write-pointer stores
// to uncached memory) before the doorbell; then one 8-byte MOV, so the
// engine never sees a partial doorbell (DOORBELL_INVALID).
TEXT ·StoreDoorbell(SB), NOSPLIT, $0-16
	MOVQ  p+0(FP), AX
	MOVQ  v+8(FP), BX
	SFENCE
	MOVQ  BX, (AX)
	RET
