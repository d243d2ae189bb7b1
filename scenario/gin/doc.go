// Package gin registers the scenarios on NCCL's GIN device API (package
// fabric, section GIN) over the emulated network of package nic: several
// nodes (--lsa-size GPUs each)
// joined by one NIC per GPU (--ranks 16 --lsa-size 8 is two MI355X-sized
// nodes; without --lsa-size all ranks share one node and GIN still goes
// through their NICs, loopback included).
//
//   - gin-alltoall: every rank puts --bytes to every other rank with a
//     strong signal and waits for its n−1 signals; peers are staggered
//     (rank + i) so that the receive ports share the load; its time is
//     the NIC model's closed form, PostCost + (n−1) puts' packets through
//     the one transmit port + Latency (a test checks it as bytes,
//     bandwidth and latency vary).
//   - gin-allgather: every rank puts its block to every other rank.
//   - gin-hier-allreduce: a u32 sum all-reduce in three phases: a CFT
//     reduce-scatter inside each node (CFT red of chunk p to node rank p,
//     then a CFT barrier), GIN puts with a strong signal across nodes on
//     the rail, and a CFT all-gather inside the node (hier.go).
//   - gda-allgather: an all-gather on MORI's ccoGda under rail
//     connections: put with ccoGda_SignalInc, one consuming waitSignal per
//     peer, then the GDA barrier (fabric/gda_barrier.go; without
//     --lsa-size the ranks form two nodes).
//
// GIN over SDMA (sdma.go; NCCL_GIN_TYPE=7, RCCL's Anvil backend, one node
// of --ranks GPUs, --model the engines' model, --faults engine faults):
//
//   - gin-sdma-alltoall and gin-sdma-allgather: the programs of
//     gin-alltoall and gin-allgather, each put an SDMA COPY plus its
//     signal (or the fused packet on gfx950);
//   - gin-sdma-split: each block in two puts on contexts 0 and 1 (two
//     queues on two engines), each with a weak signal; the receiver waits
//     for both.
//
// Planted bugs, each with its fixed twin (emud hunt runs them), from the
// classes GIN users report:
//
//   - gin-weak-signal: each block goes in two halves and only the second
//     carries a signal, a weak one: it implies only its own half, so on a
//     network that places packets out of order the receiver copies the
//     first half before it has landed (each sender signals a slot of its
//     own, and the receiver's thread for that sender copies at once) (fixed twin gin-halves, a strong
//     signal, which implies every earlier put of the context to the peer);
//   - gin-shared-signal: two thread blocks per rank each wait on signal 0
//     for their own peers' puts, so a block can be released by the other
//     block's signals and copy data that has not arrived (fixed twin
//     gin-blocks, one signal index per block);
//   - gin-reset-after-signal: each rank zeroes its signal at the start of
//     its kernel, after peers launched earlier may already have signalled
//     it; their increments are lost and the rank waits forever (fixed
//     twin gin-reset-barrier: reset, then a GIN barrier, then put);
//   - gin-sdma-weak-split: gin-sdma-split with only the second part
//     signalled, weakly, leaning on the SDMA queue's order for the first
//     part; but the first part runs on context 0's queue, on another
//     engine, and copies sharing a link interleave by 256 KiB chunks, so
//     the small second part lands (and signals) while the first is still
//     landing (hunted at 320 KiB per pair, where the first part spans two
//     chunks; fixed twin gin-sdma-split);
//   - gda-crossnode-barrier: gda-allgather over CCO_GDA_CONNECTION_CROSSNODE,
//     where MORI's GDA barrier hangs on nodes of several GPUs: a node's
//     ranks share one GDA rank, so their arrivals share a slot (fixed twin
//     gda-allgather);
//   - gin-bcast-block-barrier: a broadcast from rank 0 over four thread
//     blocks whose GIN barrier is per block (index = block) while only
//     the root's block 0 puts, every block of a receiver reading its
//     baseline of signal 0 after its barrier and waiting for baseline + 1;
//     when a block is late (found by PCT's preemptions) the root's put has
//     landed before that baseline read, and the hang report says the
//     baseline counted it (fixed twin gin-bcast: the root's block k puts
//     slice k with signal k, and receivers read the baseline before
//     barrier k, the barrier that orders that producer) (bugs.go);
//   - gin-barrier-alias: two rounds of puts over two contexts, each
//     closed by a hand-rolled all-contexts barrier (a strong signal per
//     context to every peer, then a wait for contexts × peers) on one
//     shared signal, so the second barrier instance sees the first one's
//     counts and its round's data is copied before it lands (fixed twin
//     gin-barrier-distinct, a signal index per barrier instance);
//   - gin-init-unreachable: GIN init's ring all-gather of per-rank handles
//     (ncclGinIbAllGather's shape) over the world ring on a rail-only
//     network (fabric.Config.NicRailsOnly; package nic's Reachability),
//     where rank + 1 is on another rail: the put is lost and the
//     neighbour spins in its first wait; the hang report names the QP and
//     the unreachable NIC (fixed twin gin-init-rail-ring: the ring runs
//     along the rail, rank + lsa-size; hunted at 2 nodes × 2 GPUs);
//   - gin-hier-no-barrier: gin-hier-allreduce without the CFT barrier
//     after the intra-node reduce-scatter, so the cross-node GIN put reads
//     its partial sum before the node peers' reds have landed (fixed twin
//     gin-hier-allreduce; hunted at 2 nodes × 2 GPUs; hier.go).
//
// The receivers of the planted programs copy what they received into an
// output window as soon as their wait returns; the host checks that copy,
// so a release that came too early shows as wrong data.
package gin
