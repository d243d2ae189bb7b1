package mlx5

import "encoding/binary"

// CQESize is an mlx5_cqe64's size.
const CQESize = 64

// CQE opcodes (op_own's high nibble) and error syndromes used here.
const (
	CQEReq     = 0x0
	CQEReqErr  = 0xd
	CQEInvalid = 0xf

	SyndromeLocalProt    = 0x04
	SyndromeWRFlush      = 0x05
	SyndromeRemoteAccess = 0x13
)

// Offsets in mlx5_cqe64 (and mlx5_err_cqe, which shares its tail).
const (
	cqeByteCnt    = 44
	cqeSyndrome   = 55
	cqeSopQPN     = 56
	cqeWQECounter = 60
	cqeOpOwn      = 63
)

// CQE is one completion as written.
type CQE struct {
	Opcode     uint8 // CQEReq or CQEReqErr
	Owner      uint8 // the pass over the CQ, 0 or 1
	WQECounter uint16
	WQEOpcode  uint8
	QPN        uint32
	ByteCnt    uint32
	Syndrome   uint8 // error CQEs
}

// Put writes c into b (64 bytes) as mlx5 hardware lays a requester
// completion out; the bytes it does not name are zero.
func (c CQE) Put(b []byte) {
	clear(b[:CQESize])
	if c.Opcode == CQEReqErr {
		b[cqeSyndrome] = c.Syndrome // mlx5_err_cqe has no byte count
	} else {
		binary.BigEndian.PutUint32(b[cqeByteCnt:], c.ByteCnt)
	}
	binary.BigEndian.PutUint32(b[cqeSopQPN:], uint32(c.WQEOpcode)<<24|c.QPN&0xffffff)
	binary.BigEndian.PutUint16(b[cqeWQECounter:], c.WQECounter)
	b[cqeOpOwn] = c.Opcode<<4 | c.Owner&1
}

// ReadCQE decodes a CQE (for tests and reports).
func ReadCQE(b []byte) CQE {
	sq := binary.BigEndian.Uint32(b[cqeSopQPN:])
	return CQE{Opcode: b[cqeOpOwn] >> 4, Owner: b[cqeOpOwn] & 1, WQECounter: binary.BigEndian.Uint16(b[cqeWQECounter:]),
		WQEOpcode: uint8(sq >> 24), QPN: sq & 0xffffff, ByteCnt: binary.BigEndian.Uint32(b[cqeByteCnt:]), Syndrome: b[cqeSyndrome]}
}
