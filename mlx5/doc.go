// Package mlx5 is the NIC beneath MORI's ccoGda device code when emud runs
// it natively (capi/mori_gda.go): the send-queue side of an mlx5 queue
// pair, as the device code sees it through memory.
//
// MORI's mlx5 provider (include/mori/core/transport/rdma/providers/mlx5)
// writes work-queue entries into a send queue buffer in 64-byte basic
// blocks (WQEBBs), stores the producer counter into the doorbell record
// (big-endian, low 16 bits, the record's second word) and stores the last
// WQE's first control qword to the UAR doorbell. The NIC then fetches the
// WQEs between its consumer counter and the doorbell record's, carries
// each over the network, and reports completions in the completion queue.
// QP.Doorbell is that NIC's reaction to a UAR store; the caller (emud's
// host control plane) watches the UAR word and calls it.
//
// # What is decoded (rdma-core's public mlx5 layouts, big-endian)
//
// A WQE begins with the 16-byte control segment: opmod (8 bits), the WQE
// index (16) and the opcode (8) in its first word; the QP number (24) and
// DS, the WQE's size in 16-byte units, in its second; the fm_ce_se byte
// whose CQ_UPDATE bit (0x08) asks for a completion; and an immediate.
// Emulated opcodes: RDMA WRITE (0x08) with a gather list of data segments
// or one inline segment (byte count with bit 31 set, the bytes after it),
// RDMA WRITE with immediate (0x09, the immediate is carried nowhere: there
// is no receive queue), RDMA READ (0x10) with a scatter list, and the
// 8-byte atomics compare-and-swap (0x11) and fetch-and-add (0x12): a remote
// address segment, an atomic segment (swap/add, compare) and one 8-byte
// data segment that receives the old value. Masked (extended) atomics
// (0x14, 0x15), SEND and anything else are refused: Doorbell fails the run
// with an error naming the queue, the WQE index and the opcode. So are a
// WQE whose index field is not the counter it sits at (a stale or torn
// WQE), a DS that does not fit its segments, and a doorbell record ahead
// of the consumer by more than the queue holds.
//
// Addresses are MORI's iova-0 registration (ccoWindowRegister's
// IBV_ACCESS_ZERO_BASED MRs): an address is an offset into the memory
// region its key names, which the Keys callback resolves. An unknown key
// or a range past its region gives an error completion (REQ_ERR with
// syndrome LOCAL_PROT or REMOTE_ACCESS, as hardware) and, since MORI's
// quiet asserts on it, the run fails with the same facts in words.
//
// # Timing and order (package nic)
//
// A WRITE is one nic.Message on the QP's link: each packet's payload is
// read from the source as it leaves and written at the destination as it
// lands; it completes one latency after its last packet landed (the RC
// acknowledgement). A READ's request takes one latency to the responder,
// whose NIC then sends the data back on the reverse link; it completes
// when the data has landed. An atomic is a header-only message; it is
// applied at the responder as it lands, and its old value lands in the
// local buffer one latency later, when it completes. Completions are
// reported in WQE order, as an RC send queue does: a WQE that finishes
// before an earlier one waits for it.
//
// # Completion queue
//
// A CQ of n 64-byte CQEs, each written as mlx5_cqe64: opcode REQ (0) and
// the owner bit (the pass over the CQ) in op_own, wqe_counter the
// completed WQE's index, byte_cnt, and the WQE's opcode and QP number in
// sop_drop_qpn. MORI creates its CQs collapsed (cc=1, oi=1: every CQE is
// written to entry 0, no consumer doorbell) and fills them with 0xff so
// that an untouched entry reads "nothing completed"; Collapsed selects
// that. Only WQEs with CQ_UPDATE write a CQE.
//
// # Race detector
//
// With Config.Race, each WQE is a detector thread forked from the
// doorbell's storer, its reads and writes accesses; an in-order QP's
// atomic acquires what landed before it and releases into its word;
// completions release into the CQE and Config.DoneWords (race.go).
//
// # Not modelled
//
// The receive queue (SEND, immediates), BlueFlame writes of the WQE
// itself into the UAR (MORI stores only the control qword there),
// fences and the fm bits, multi-packet atomics, and the 2 GiB meaning of
// a zero byte count (a zero-length segment moves nothing here).
package mlx5
