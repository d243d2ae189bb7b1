// Package nic models the network that joins the nodes of a multi-node job:
// one NIC per GPU, a switched network with a one-way latency, per-NIC
// bandwidth shared by the flows that use it, and the delivery order the
// transport gives.
//
// It is memory-agnostic. A user (the GIN device API in package fabric)
// posts a Message on a QP (a queue pair: one source NIC, one destination
// NIC, one GIN context); the network calls the message's Read callback as
// each packet's payload leaves the source (its DMA read), Land as each
// packet arrives at the destination, Sent once every packet has left
// (local completion: the source buffer may be reused) and Done once every
// packet has landed.
//
// # Mechanism
//
// A message is cut into packets of at most Model.MTU payload bytes (Chunk
// in phantom runs, where nothing is copied). Each NIC's transmit port
// sends one packet at a time, taking (payload + HeaderBytes) / LinkGBps;
// it serves the QPs that have packets waiting round-robin, one packet per
// turn, so concurrent flows share the NIC's bandwidth evenly. A packet
// arrives Latency after it left, and no earlier than the destination NIC's
// receive port can take it (the receive port also serialises at LinkGBps:
// incast shares the receiver's bandwidth). Every choice is deterministic;
// OutOfOrder draws each packet's extra delay from the run's seed.
//
// # Ordering
//
// InOrder is a reliable-connected QP (InfiniBand/RoCE RC): the packets of a
// QP land in the order they were sent, so messages on one QP land in post
// order. OutOfOrder is a transport that places packets directly as they
// arrive (direct data placement, as on NICs that spray packets over paths):
// each packet's arrival gets an extra delay in [0, Jitter), and nothing
// keeps a QP's packets in order; a message is Done when its last packet,
// whichever it is, has landed. Which one a system gives is a property of
// the NIC and its configuration, so it is a model parameter.
//
// # Reachability
//
// Network.SetUnreachable marks NIC pairs without a path (NICs on disjoint
// rails with no cross-rail or hairpin route, a failed link). Their
// packets leave the source and are lost, with no error completion: a
// waiter at the destination spins until a timeout or for ever. This is
// the failure behind NCCL's GIN init hang, whose ring all-gather at dev
// comm creation spins when a ring neighbour's NIC is unreachable
// (https://github.com/NVIDIA/nccl/pull/2318: "ncclGinIbAllGather spins
// forever if the RDMA fabric between neighboring ranks is disconnected
// (e.g., NICs on disjoint rails)"; https://github.com/NVIDIA/nccl/issues/2203:
// no cross-rail loopback, NCCL_CROSS_NIC=0 advised). Losing the packet
// silently rather than raising an error CQE after the RC retry budget is
// a simplification: that budget is far longer than the runs modelled.
//
// # Parameters and their sources
//
// DefaultModel is a 400 Gb/s NIC per GPU, as the AMD Pensando Pollara 400
// AI NIC (https://www.amd.com/en/products/accelerators/pensando/ai-nics/pollara-400.html)
// and NVIDIA ConnectX-7 (https://www.nvidia.com/en-us/networking/ethernet-adapters/)
// give: 50 GB/s per direction. The one-way latency (2 µs through one
// switch tier) and the 64-byte per-packet header are round numbers of the
// magnitude RDMA vendors publish, not measurements; MTU 4096 is the
// largest InfiniBand/RoCE MTU. None of them is calibrated: there is no
// documented multi-node measurement in this repository.
package nic
