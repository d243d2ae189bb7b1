// Package fabric is NCCL's CFT (Compute Fabric Transport) device API, host
// side and device side, on an emulated system of ranks joined by a fabric
// of logical endpoints (LEs).
//
// It follows NCCL 2.31's "Device API - CFT" (NVIDIA/nccl
// docs/userguide/source/api/device_cft.rst) as docs/cft-semantics.md states
// it; section numbers below are that document's. Reductions are done by package fabric/redop.
//
// # System and host side
//
// NewSystem builds the emulated system on a sim.Sim from a Topology: world
// size, NVLink (LSA) domain size, CFT unicast group (flat team) size and
// multicast group size, each a block of consecutive world ranks, with ranks
// that lack CFT (NoCft), no multicast (NoMulticast) and owner access to the
// own LE (PutToSelf) as switches. NCCL 2.31 collapses the CFT sizes to
// lsaSize (§2.2); here they are independent so that the hierarchical teams
// have more than one rank. NCCL_CFT_ENABLE=0 in Config.Env turns CFT off.
//
// CommInitAll makes every rank's Comm (hostCftMode: enable creates LEs at
// init and fails without CFT, fallback creates them when supported, the
// default and disable create them with the first CFT dev comm).
// CommWindowRegister allocates and registers a window; registration is
// symmetric (the k-th allocation of every rank has the same offset and size,
// checked) and WinCollSymmetric windows are bound to the rank's LEs.
// DevCommCreate takes DevCommRequirements{CftCaps, CftBarrierCount} and fails
// as §1.3 says: CFT requested while some rank lacks it, NCCL_CFT_MULTIMEM
// without NVLS ("CFT multicast support requested, but NVLS is disabled or
// unsupported."), NCCL_CFT_MULTIMEM without NCCL_CFT. Host failures are
// *Error values carrying NCCL's result code. The host LE queries
// (GetCftDeviceLeInfo, GetPeerDeviceLeInfo, GetMultimemDeviceLeInfo) fail
// before LE creation (ncclInvalidUsage), on windows not registered for CFT
// (ncclInvalidUsage), without CFT support or with a peer outside the flat
// team (ncclInvalidArgument).
//
// Memory: each rank's device memory is a byte slice owned by the System
// (not engine.Node, whose flat SDMA address space has no use for LEs). It
// is the rank's symmetric "big VA": a window's leOffset is its offset there,
// the same on every rank. The dev comm's resource window holds the barrier
// buffers with NCCL's layout (§10.2). System.Read and System.Write are the
// host's cudaMemcpy. Allocations of 1 MiB or more are mapped outside the Go
// heap (hostmem), so a run's resident memory is about its emulated
// bytes instead of the collector's goal for them; System.Close releases
// them (scenario/cft's collectives close their system), and a System
// nobody closed releases them when it becomes unreachable (hostmem keeps
// up to its KeepMax of released buffers for the next Map of their size). Operations'
// data snapshots are pooled per System and reused (a put or red of up to
// 64 B keeps its snapshot in its own record), and so are the records of
// finished puts and reds; an operation schedules its steps without a
// closure each (sim.AtWorkStep), so a put allocates nothing in the steady
// state.
//
// # Teams and LEs
//
// Team is ncclTeam {nRanks, rank, stride}; TeamCft(dc, mode) and
// TeamCftMultimem(dc) (device) and HostTeamCft / HostTeamCftMultimem (host)
// build the flat, hier-multimem, hier-LSA and multimem teams of §2.2; the
// rank conversions are DevComm.TeamRankToWorld, TeamRankToLsa and
// TeamRankInTeam. LE ids are distinct across the system so that an LE a
// rank never imported is refused: flat group g's unicast LEs are UcLeBase +
// g × cftSize + flatRank, multicast group m's LE is McLeBase + m.
// GetCftLeInfo, GetPeerLeInfo and GetMultimemLeInfo are the device queries
// with NCCL's arithmetic and, like them, no checks.
//
// # The Cft object
//
// In the kernel (package kernel), every thread of a coop builds
// NewCft(coop, devComm, cftSmem); CftSmem is the shared-memory offset of the
// user's ncclCftSmem (the Go form takes the dev comm because LE ids need the
// emulated fabric). Put, PutCpMask, PutMultimem, PutMultimemCpMask, Get,
// Red, RedCpMask, RedMultimem, RedMultimemCpMask and PullRed take the OpCoop
// that issues; its elected thread (every thread of a thread group, the
// lowest active lane of a warp, thread 0 of a block) issues after op.sync().
// The mbarrier is modelled as in §4.1: one arrival per phase, a signed
// tx-count raised only by Submit (expect_tx), lowered as operations complete
// (bytes/16 for put and red, bytes for get and pullRed), a report predicate
// and code per phase. FlushSmem waits until submitted operations have read
// their shared-memory sources; Flush arrives and waits for the phase, and
// returns (hasReport, report) with report 0 on success (the code writes it
// either way). PullRed starts at issue (the fetching submit every lane
// runs); its tx is expected at the next Submit.
//
// Rules enforced, each failing the kernel at the call with a
// *kernel.LaneError naming the rule: 16-byte aligned shared-memory pointers
// and leOffsets, sizes positive multiples of 16, shared ranges inside the
// block's shared memory and clear of the ncclCftSmem, LE ranges inside a
// window bound to the LE on the target, unicast ops on unicast LEs and
// multimem ops on the rank's own multicast LE (which needs NCCL_CFT_MULTIMEM),
// no unicast access to the own LE unless Topology.PutToSelf, pullRed only
// from a warp, OpCoop not wider than the coop, reduction pairs redop.Check
// accepts (f64 add has no pullRed), cpMasks that enable whole elements for
// reductions, at most 2^20 − 1 tracked tx units between flushes (16 MB of
// put/red, 1 MB of get/pullRed, and the combined rule of §6), no issue
// while another group's flush runs, one flush per phase.
//
// Submit before flush (§4.3 rule 1) is the one rule whose hardware outcome
// is undefined: in debug mode (Config.Debug) a flush or flushSmem with
// operations some group issued but never submitted fails at once, naming
// the group; in release mode the phase waits for them, they never start,
// and the run ends in sim's hang report whose lead cause names the group
// and its operations.
//
// # Barriers and fences
//
// NewCftBarrierSession(coop, dc, index, multimem) with Arrive, Wait, Sync
// and the timeout variants WaitTimeout / SyncTimeout (timeoutCycles at
// Model.ClockGHz) runs NCCL's algorithm (§10.3) over the fabric: unicast
// arrive puts the absolute epoch + 1 into each peer's inbox granule,
// multimem arrive adds 1 into every member's multicast inbox; waits poll the
// local inbox with the 32-bit rolling compare. Epochs live in the barrier
// buffer and persist across launches (thread 0 stores its epoch after each
// completed wait, which is what the destructor's store gives the next
// launch). An index not below cftBarrierCount and a multimem session
// without NCCL_CFT_MULTIMEM fail at construction. A timed-out wait returns
// Timeout for the threads that timed out and poisons the slot: later
// sessions on it fail. A barrier that can never complete (an index some rank
// never arrives at, a dropped arrival) ends in the hang report with the
// barrier, the inbox value, the target and each missing peer named.
// These causes are typed (sim.Cause, kinds CauseBarrierWaits and
// CauseFlushWaits) and carry the waiting rank in Ranks, their text naming
// no rank of its own, so ranks stuck the same way (ranks 0–2 each waiting
// for rank 3's arrival, several ranks' groups skipping submit) are said
// once for all of them.
//
// MemFence(coop, dc, order, producer, consumer, scope) follows §9 (relaxed
// does nothing; release syncs before, acquire after). Memory is sequentially
// consistent, so fences move no data. In debug mode a checker tracks, per
// byte of every rank's memory, the last write and its proxy (Fabric for
// deliveries of put/red, Generic for DevComm.Store, none for host writes).
// A read (DevComm.Load for the Generic proxy, get and pullRed sources for the
// Fabric proxy) is ordered after a write when the reader made it through
// the same proxy, or, for its own writes, acquired (producer → consumer,
// Sys) after the write landed, or, for another rank's writes, when the
// writer released them (MemFence release or a barrier arrive with a release
// order, producer → consumer, Sys, after the write landed) and the reader
// acquired after that release (a fence or a barrier wait with an acquire
// order). Otherwise the kernel fails with a *FenceError naming the missing
// fence. Cta-scope fences order shared memory only. Approximations: the
// checker keeps only the last write per byte, orders by virtual time rather
// than by the barrier's happens-before edges, and does not track generic
// writes to shared memory; DevComm.LoadRelaxed is an unchecked flag read.
//
// The race detector (Config.Race, package race; race.go lists the edges)
// subsumes the checker with happens-before: submit, flushSmem, flush,
// barrier arrive and wait, and MemFence by proxy type are its edges, and
// it also sees shared memory (kernel.Thread.SharedLoad/SharedStore) and
// fabric operations against each other's generic accesses. It reports at
// the end of the run (a *race.Error) instead of failing the kernel at the
// load. Like the checker it requires the writer's release across the
// proxies and the reader's acquire after it (see package race).
//
// # Fault injection
//
// Config.Faults (a FaultPlan, drawn from the run's seed through sim.Sim.Rand
// stream FaultStream) fails chosen data operations (FailOps: the n-th op of
// a rank; OpFailRate: a seeded chance per op): their data does not land and
// the flush of their phase reports Code. DropBarrier loses a rank's
// arrivals at a barrier so waits time out or hang.
//
// # Timing
//
// Model has named parameters: InjectionGBps (each GPU's fabric bandwidth per
// direction; ops leaving a GPU share its egress port, writes arriving share
// its ingress port), Latency (one way), IssueCost, McFanout (the switch's
// extra cost per multicast member) and ClockGHz (SM clock for timeouts).
// There is no documented calibration for CFT. DefaultModel takes NVLink 5 as
// in GB200 NVL72: 18 links of 100 GB/s, 1.8 TB/s bidirectional per GPU
// ("A single NVIDIA Blackwell Tensor Core GPU supports up to 18 NVLink 100
// GB/s connections for a total bandwidth of 1.8 TB/s",
// https://www.nvidia.com/en-us/data-center/nvlink/), so 900 GB/s per
// direction; Latency 1 µs, IssueCost 20 ns and McFanout 5 ns are
// uncalibrated round numbers, and ClockGHz 1.9 is a B200-class boost clock.
// A put's source is read as it streams through the egress port (all of it
// by the time flushSmem returns), lands after Latency (queued behind
// earlier arrivals at the destination), and completes when the ack returns
// after another Latency, never before its last granule has landed (a PCT
// preemption that defers a delivery defers the completion with it); get and pullRed complete when all of the data has reached
// shared memory (the last granule to land, not granule k-1: PCT may
// defer an earlier one past it), and a put's shared memory is free once
// every granule has been read. Data moves in Granule (4 KiB) pieces in address order, each
// read and landed when its bytes have passed the port, so a load during an
// operation sees the granules landed so far. Each granule's delivery
// applies as one event, one allowed interleaving of the element-wise
// atomics; the seed orders events due at the same time. The port
// arithmetic (when an operation's bytes leave, arrive and are acked) is
// Ports, exported so that emud's C++ NCCL layer (capi/nccl_cft.go) times
// its CFT operations and barriers with the same code: a C++ collective
// and its Go twin end at the same emulated time (cxx
// TestCftAllReduceMatchesGo). LSA loads and stores to peers' windows
// and the LSA barrier's signals are timed on the same ports (lsa.go:
// Ports.LsaSpan, Ports.LsaSignal, and LaneCode, what a wave's lanes pay
// between device calls, which the C++ lanes pay through too: cxx
// TestLsaAllReduceMatchesGo; docs/timing.md says what is modelled).
//
// # Scenarios
//
// The collectives built from these calls live with the other scenarios:
// package job's NewFabric builds a ready system of N ranks from a seed
// (comms, windows, dev comms), and scenario/cft's RunAllReduce (pullRed +
// redMultimem + multimem barriers, each rank's chunk moved in
// shared-memory-sized pieces) and RunAllToAll (put + unicast barrier) run
// whole collectives and check every byte: `emud run cft-allreduce` and
// `emud run cft-alltoall`. System.Fill and System.View are the host's
// in-place writes and copy-free reads they use.
//
// # Phantom memory
//
// With Config.Phantom, windows have no bytes: every operation is timed as
// with real bytes, but nothing is stored, loads and host reads see zeros,
// and collectives skip their data checks. An operation lands in one step
// at the time its last granule would (there is nothing to stream), so a
// run whose operations span several granules has fewer events: the seed's
// tie-breaks fall otherwise, giving another digest and possibly another
// valid schedule (the 72-rank 64 MiB all-reduce ends at 112.659 µs phantom,
// 112.199 µs with real bytes). Runs of one-granule operations are the real
// run exactly, digest included. Dev comm resource windows stay backed, so
// barriers run as usual. Runs of a thousand ranks with megabytes each fit in memory this
// way; the fence checker (Debug) needs real bytes and refuses it.
//
// # GIN: GPU-initiated networking (gin.go)
//
// NCCL's Device API GIN (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/device_gin.html,
// NCCL 2.28.7 and later; the strong/weak signals of 2.30.5) over the
// emulated network of package nic: one NIC per GPU, a node being an LSA
// domain (Topology.LsaSize ranks). DevCommRequirements' GinContextCount,
// GinSignalCount, GinCounterCount, GinBarrierCount, GinStrongSignalsRequired
// and GinConnectionType (full or rail) give a dev comm its GIN resources;
// the signals (64 bits each, then the barrier slots) are a symmetric
// allocation in the rank's memory, counters live with the dev comm.
// In debug mode (Config.Debug) a waitSignal that its thread's previous
// satisfied wait on the same slot already covers (no resetSignal since)
// fails at the call: it orders nothing new, the shape of two barrier
// instances sharing one signal slot. A hang at a waitSignal whose
// baseline readSignal already counted a landed signal says so in its
// cause (a baseline read after the producer could signal).
// Config.Nic picks the network model (nic.DefaultModel: 400 Gb/s, in
// order). Config.NicRailsOnly makes the network rail-only: NIC i of a node
// reaches only NIC i of the other nodes, and packets to another rail are
// lost (package nic, Reachability), so a wait for them hangs with the
// hang report naming the QP and the unreachable NIC.
//
// NewGin(thread, devComm, context) is ncclGin; its calls take the coop
// that issues (thread, warp or block; the elected thread posts):
// Put, PutValue, Signal and Get post an operation on the QP of the context
// from the rank to the peer, whose packets read the source as they leave
// and land as they arrive (a load during a put sees the packets landed so
// far). The ordering is what the documentation promises and no more:
//   - a signal attached to a put (RemoteAction) is applied when that put's
//     data has settled; a weak signal (GinWeakSignal*) implies only that
//     put, a strong one (GinStrongSignal*, and the deprecated GinSignal*
//     when GinStrongSignalsRequired) is applied only once every earlier
//     operation of the context to that peer has settled, so it implies
//     all of them; Signal without data follows the same rule;
//   - a counter (GinCounterInc, the local action) rises when the put's
//     source has been read: local completion, nothing about the peer;
//   - Flush waits until the operations the coop's threads posted on the
//     context are locally consumed (sources reusable, gets landed); it
//     does not mean remote data has landed;
//   - ReadSignal, WaitSignal, ReadCounter and WaitCounter compare rolling
//     at their width (bits; counters at most 56): v has met least when
//     v − least mod 2^bits is below 2^(bits−1);
//   - ResetSignal stores 0 and may not race with signals (the race
//     detector reports one that does); with Debug, a SignalInc mixed with
//     a SignalAdd on one slot without a reset fails the run.
//
// GinBarrierSession (NewGinBarrierSession on one context,
// NewGinBarrierSessionAllContexts for ncclGinAllContexts) is a world or
// team barrier whose Sync takes the fence: GinFencePut makes each
// member's arrival a strong signal on each covered context (so the puts
// members issued to this rank before arriving are visible after it),
// GinFenceGet first waits for the caller's own gets.
//
// On an InOrder network (RC) packets of a QP land in order, so a program
// that leans on a weak signal for an earlier put gets right data in
// release runs and only the race detector says it is wrong; on an
// OutOfOrder network the same program shows wrong data on some seeds.
// The race detector's edges are exactly the rules above (gin_race.go),
// each operation a detector thread of its own. A hang report names, for a
// waiting lane, the slot, the value it holds and wants, and the operations
// in flight to it with their NIC, QP and packets landed
// (CauseGinSignalWaits, CauseGinBarrierWaits).
//
// # MORI's ccoGda (gda.go, gda_signals.go, gda_flush.go, gda_barrier.go)
//
// MORI's GDA device layer (ROCm/mori include/mori/cco/cco_scale_out.hpp)
// on the same NIC model and GIN machinery, with MORI's names: NewGda is
// ccoGda(devComm, contextIndex) (the QP is contextIndex mod
// GinContextCount, as MORI's qpIdx), and Put, PutValue, Get, Signal,
// ReadSignal, WaitSignal, ResetSignal, Counter, ReadCounter, WaitCounter,
// ResetCounter, Flush, FlushPeer, FlushAsync, Wait, and
// NewGdaBarrierSession/GdaBarrier with Sync. A dev comm gets GDA with
// DevCommRequirements.GdaConnectionType (GdaConnectionNone, Full,
// CrossNode or Rail) and RailGdaBarrierCount; gdaContextCount,
// gdaSignalCount and gdaCounterCount are the GIN counts. GdaPeerToWorld and
// WorldPeerToGda are MORI's world↔GDA rank mapping (FULL: identity; RAIL:
// the node index; CROSSNODE: the other nodes' ranks with this rank at its
// node's first index), and a peer argument is a world rank (GdaTeamWorld)
// or a GDA team index (GdaTeamGda). Where MORI differs from GIN the
// emulator follows MORI:
//   - a put's signal is an atomic WQE after the data WQE on the same QP,
//     without a fence: on an InOrder (RC) network it implies every earlier
//     operation on that QP (GIN's strong signal), on an OutOfOrder network
//     only its own put (the race detector reports a program that leans on
//     more); there is no weak/strong choice and no Inc/Add mixing rule;
//   - WaitSignal compares the slot less a per-rank shadow with least
//     (plain unsigned, not rolling) and then consumes least (shadow +=
//     least); ReadSignal returns the slot less its shadow; ResetSignal
//     zeroes both;
//   - Flush, FlushPeer, FlushAsync/Wait and Counter wait for completions
//     (CQEs) of every operation posted on the QPs, by any thread of the
//     rank: a write's completion arrives one network latency after its
//     data has landed (the acknowledgement), so a completed put's data is
//     at the peer — more than ncclGin::flush promises; Counter is that
//     quiet plus +1 on a counter, not a per-operation local action, and
//     WaitCounter compares plainly;
//   - the barrier posts +1 to slot signal0 + index·nRanks + (its GDA rank)
//     at every other GDA team member and consumes 1 from each member's
//     slot. MORI sizes the rail barrier pool nBarriers × nNodes and
//     enables it only with more than one node; Sync refuses an index whose
//     team would index past the pool (FULL or CROSSNODE teams are larger
//     than the rail team), and under CROSSNODE with several GPUs per node
//     a node's ranks share a GDA rank, so their arrivals share a slot and
//     the barrier hangs, as MORI's code would (the hang cause says so);
//   - calls MORI would miscompile or mis-route are refused with the
//     reason: a thread coop for flush, counter, wait or the barrier (MORI
//     static_asserts a warp), CCO_TEAM_LSA (MORI's resolveWorldPeer reads
//     it as a GDA index), Signal with ccoGda_NoSignal (MORI's code posts +1
//     on signal 0), a peer the connection type gives no QP to.
//
// Not modelled yet: VA signals, get-side DescriptorSmem, ncclGin's
// flushAsync/wait requests (ccoGda's are), timeouts on ncclGin barriers,
// and multiple QPs per context. By default (NCCL_GIN_TYPE unset, 2 or
// any value but 7) GIN traffic between ranks of one node also goes
// through their NICs (loopback included), as a GIN backend over the
// network does.
//
// # GIN over SDMA: RCCL's Anvil backend (gin_sdma.go)
//
// RCCL selects its GIN backend with NCCL_GIN_TYPE: "rocSHMEM GDA moved
// from 5 to 6 and Anvil SDMA from 6 to 7 because NCCL 2.31 placed EFA GDA
// at 5. The IB proxy remains NCCL_GIN_TYPE=2", and the host proxy is the
// default (https://rocm.docs.amd.com/projects/rccl/en/docs-10.2.0/how-to/device-api-gin.html).
// The Anvil backend is "an intra-node xGMI backend", selected with
// NCCL_GIN_ENABLE=1 and NCCL_GIN_TYPE, putting larger messages on Anvil
// SDMA queues (https://github.com/ROCm/rocm-systems/pull/7826), and RCCL's
// GIN SDMA collectives run only when every rank is reachable over LSA
// (https://github.com/ROCm/rocm-systems/pull/10386). Here Config.Env's
// NCCL_GIN_TYPE (the process environment when Env is nil) picks the
// backend: unset, as RCCL's default, or 1–6, the NIC model; 7, GIN over
// SDMA for every peer in the rank's node (an LSA domain), while a peer on
// another node still goes over the NIC (RCCL's Anvil comms are one node;
// a mixed system is the emulator's generalisation). Other values are
// refused by NewSystem. ccoGda always uses the NICs.
//
// RCCL's plugin sends messages of at most NCCL_GIN_ANVIL_SDMA_THRESHOLD
// (128 B by default) as IPC flat stores instead of SDMA (PR 7826 above);
// that path is not modelled: every size goes on SDMA here.
//
// Under 7 each node is an engine.Node (Config.Sdma gives its model, hence
// its architecture, model.ArchOf; Config.SdmaInject its fault plan) whose
// flat address space maps the ranks' allocations, the same bytes (GPU
// g's slice at the rank's symmetric offsets). A connection (context c
// from rank r to peer p) is the node's queue (r → p, c mod QueuesPerPeer),
// loopback included, placed on the engines as MORI places its channels;
// the lane that posts reserves, writes the real packet bytes and rings the
// doorbell (issuer.Queue), and the engine executes them with its timing
// and its fault injection. The lowering:
//   - put: COPY_LINEAR from the source to the peer's window (split at
//     ring.MaxCopyBytes); with a signal, an ATOMIC ADD64 of the value on
//     the peer's slot after it, or, where the architecture lowers onto it
//     (Arch.Fused and LowerFused: the gfx950 and gfx1250 presets), one
//     COPY_LINEAR_WAIT_SIGNAL carrying the signal in its signal block (no
//     wait block). The mi355x preset keeps the two packets, as MORI's
//     cco.hpp posts them;
//   - putValue: WRITE_LINEAR of its dwords (then the signal's ATOMIC). A 1-
//     or 2-byte value or an unaligned destination is refused with an error
//     naming the rule: WRITE_LINEAR writes whole dwords;
//   - signal (and a GIN barrier's arrivals): ATOMIC ADD64;
//   - get: COPY_LINEAR from the peer's window into the local one.
//
// The GIN semantics hang on the packets' retirement (engine.Client): a
// put's data packet retiring means its source has been read and its data
// landed, which is the local completion its counter and flush wait for
// (flush is the drain of the queue up to the sources' reads) and its
// settlement; the signal's packet retiring is the signal applied (the
// Inc/Add rule is checked then). The queue runs in order, so in release
// runs a weak signal does follow every earlier packet of its queue, and a
// program leaning on that sees right data (but contexts are separate
// queues on separate engines, and there it does not). The race detector
// keeps GIN's documented edges rather than the queue's order: each
// operation is a detector thread of its own (a put's source reads a
// second one, so that a counter or flush publishes the reads and not the
// writes), the engine's chunked reads and writes are accesses of those
// threads in the ranks' memory, a signal's ATOMIC releases the operation
// into the slot (a strong signal first acquires every earlier operation of
// its connection), and the report names the GIN operation with the
// packet and queue (ncclGin::put write (COPY destination write on sdma
// gpu0→gpu1 q0)) and gives GIN's advice. A hang report names, for a
// waiter on a signal or a flush, each operation in flight with its SDMA
// queue, engine, queue state and read pointer, and the engine's own
// diagnoser adds the queue's cause (a dead queue, a stall). Lanes read
// the ranks' memory directly, so they see a copy in flight at the
// granularity the engine lands it, not burst by burst.
//
// # CFT counted writes (counted.go)
//
// NCCL 2.32.3 adds CFT counted write and wait; NVSHMEM's "Using Counted
// Writes" (https://docs.nvidia.com/nvshmem/api/latest/counted.html)
// describes the operation: the data is written and the number of payload
// bytes delivered is added to a 64-bit counter at the destination; many
// writes may add to one counter, and a receiver waits for a byte count.
// A window registered with WinCftCounted (NCCL_WIN_CFT_COUNTED, with
// WinCollSymmetric; its size a multiple of CountedAlign, 256 B) may hold
// counters. Cft.PutCounted and Cft.PutMultimemCounted take the counter's
// LE offset besides the data's: 8 bytes, 256-byte aligned, inside a counted
// window on every destination, not overlapping the data (each is refused
// with an error naming the rule); no cpMask form. Each granule delivered
// adds its bytes to the destination's counter in one atomic, so a
// multicast member's counter counts only its own bytes. WaitCounted(coop,
// devComm, order, proxy, window, offset, expected) waits (thread 0) until
// the local counter holds at least expected bytes, or the abort flag is
// set; WaitCountedTimeout gives up after timeoutCycles. The memory order
// decides what the wait gives: with acquire (or acq_rel, seq_cst) the
// counter reaching expected orders every byte whose count it includes
// before the coop, for the proxy named (the race detector's edge: each
// add releases its delivery across the Fabric→Generic and Fabric→Fabric
// proxy pairs, the wait acquires the counter and fences); relaxed gives
// nothing, and loading the data after it is a race. A wait for fewer
// bytes than the producers deliver is reported the same way (its loads
// overtake the rest), one for more hangs with CauseCountedWaits naming how
// far the counter can get. No public document read here gives the exact
// C++ signatures, the counter's alignment rule beyond "256-byte aligned"
// or whether the wait's compare rolls; the emulator takes the simplest
// reading (a plain ≥ on 64 bits), and counted writes address the same LEs
// as plain ones.
//
// # Abort flag and device-side timeouts (abort.go)
//
// System.SetAbortFlag(rank) is the host setting the comm's abortFlag
// (ncclCommAbort): every wait of that rank in GIN (signals, counters,
// flush, barriers) and WaitCounted, in progress or to come, returns, with
// WaitAborted where the call returns a WaitStatus; NCCL's waits return on
// the flag the same way (they poll comm.abortFlag). MORI's ccoGda has no
// abort flag: its waits do not see it. NCCL 2.31 added device-side timeouts to the
// blocking GIN calls; the Timeout forms (Gin.WaitSignalTimeout,
// WaitCounterTimeout, FlushTimeout, WaitCountedTimeout) take SM cycles as
// the CFT barrier's WaitTimeout does and return WaitTimedOut. The status
// type is the emulator's (WaitStatus): no public document read here
// names NCCL's.
//
// # Not modelled
//
// The resource-buffer LE queries, the report at kernel end of a Cft object with work in flight
// (§4.3 rule 3), mixing reporting mechanisms beyond the overlap check,
// strict (stale-data) visibility for missing fences (the checker reports
// them instead), and per-element interleaving of concurrent reductions
// within one delivery.
package fabric
