// Package cco is the ccoSdma device API of MORI (include/mori/cco/cco.hpp),
// host side and device side, on an emulated MI355X node or any Device.
//
// It follows MORI's ccoSdma device API with the engine-side extensions, as
// docs/cco-semantics.md states them (with their public sources); the
// section numbers below are that document's.
//
// # Host side
//
// A Host is one process over a Device: NewEmulatedHost wraps an engine.Node
// (MI355X gives the node preset: 8 GPUs, eight queue ids per peer, 256 KiB
// rings); package hw/rocm's Device drives real KFD queues. Every Queue a
// Device hands out is an issuer.Queue: MORI's issuer protocol is written
// once, in package issuer, for both. Package job builds the whole host
// side of a job (node, host, comms, windows, dev comms) in one call. Env is
// the process environment: MORI_ENABLE_SDMA (MORI's truthiness: unset,
// empty, 0, false, off, no are off), MORI_SDMA_NUM_CHANNELS and
// MORI_CCO_SDMA_DEBUG. With SDMA off every dev comm has SdmaNumQueue == 0 and
// every device call is a silent no-op, as in MORI. CommCreate, MemAlloc,
// WindowRegister, DevCommRequirementsInitializer and DevCommCreate mirror the
// ccoXxx calls (§1): the queue count comes from reqs.SdmaQueueCount, else
// MORI_SDMA_NUM_CHANNELS (capped at 8 silently), else 2; a request above 8
// is clamped with a warning; the first dev comm of a comm fixes the count and
// later ones warn. Every dev comm gets a zeroed signal pool of lsaSize × n
// 64-bit slots on its rank's GPU, never reset. Queues are keyed by (src GPU,
// dst GPU, queue id) for the whole host, so comms share rings and commit
// chains as MORI's anvil does.
//
// Emulation choices: all ranks live in one Go process, rank r on GPU r (LSA
// rank = rank; multi-node comms are refused, ccoSdma is intra-node). The
// node's flat address space stands in for the comm's VMM reservation, so a
// Window's LSA pointer is Base + ((peer × Stride4G) << 32) + offset with the
// node's slice stride. Windows are symmetric: the k-th registration of every
// rank must have the same slot offset (checked).
//
// # Device side
//
// Inside a kernel (package kernel), each thread builds NewSdma(t, devComm)
// and calls Put, Get, PutPtr, Commit, QuietQueue, Quiet, WaitSignal,
// PutBroadcast, PostWaitMem, PostWaitSignal and PostWaitMemPutPtr with the
// seed's arguments. Template arguments are trailing Options: CoopThread,
// CoopWarp, CoopBlock; LocalSignal, RemoteSignal; SdmaOptFlagsAggregate,
// SdmaOptFlagsSignalPerCopy; SdmaThreadSameQueue, SdmaThreadIndependent.
// What C++ rejects at compile time (SameQueue outside thread scope, unknown
// flag bits, flags the engine-side calls do not take) fails the kernel at
// the call.
//
// Lanes that reach a call together are its active lanes (package kernel).
// Every call is a convergence point for the lanes that make it: a lane
// that does not post (a non-leader of a warp/block-scope put, get,
// putBroadcast or postWait call, members other than rank 0 of a scoped
// quietQueue, a no-op with zero bytes or an out-of-range queue) parks at the
// call with its EXEC bit off (kernel.ConvergeIf) and resumes with
// the lanes that did post, at the same virtual time, as a wave does after a
// call run under a narrowed EXEC mask.
// Thread-scope put/get follow ccoSdmaPutThread (§6): lanes with zero bytes or
// an out-of-range queue leave before the ballot; one lane posts solo;
// SameQueue reserves once for the wave, every lane writes its unit at
// base + 32 × index into its own queue's ring (so a broken promise corrupts
// exactly as on hardware), the last lane writes the group's signals, and the
// leader rings once; Independent posts lanes on distinct queues in parallel
// and otherwise runs the match-any groups one at a time. Ring layouts (§4):
// [COPY] × k then the signal ATOMICs, or ([COPY][ATOMIC]…) × k with
// SignalPerCopy; broadcasts take three units; engine-side waits one POLL
// unit (interval 4, retry 0xFFF). Transfers above MaxCopyBytes are chunked
// with the signals on the last chunk (§9). Lanes of one wave run in
// lock-step through the protocol: all claim, all spin for space, all write,
// all spin on the commit chain, all ring. That is why a per-lane commit chain
// on a shared queue deadlocks (SdmaThreadLegacyPerLane reproduces it).
//
// # Architectures, lifecycle, barriers (emud issue 24)
//
// On the gfx950 and gfx1250 presets (model.Arch.LowerFused) a
// postWaitMemPutPtr whose flag is 8-byte aligned posts one
// COPY_LINEAR_WAIT_SIGNAL carrying the wait, the copy and the first
// signal, in the same three units the POLL + COPY + ATOMIC took; on gfx1250
// (LowerMulticast) putBroadcast posts one COPY_LINEAR_MULTICAST carrying the
// first signal. The mi355x preset keeps the two-packet forms, which is what
// MORI's cco.hpp posts and what the documented MI355X rows measured.
// Separate postWaitMem and put calls post separately (their own doorbells)
// and stay two packets everywhere. Puts above MaxCopyBytes are split with
// the signals on the last chunk only.
//
// CommDestroy frees a comm's queues (lifecycle.go). With
// DevCommRequirements.PerCommQueues comms own their queues as MORI's cco
// does: a comm made while another of its GPU is alive gets queues of its
// own, so comms never destroyed fill their engines until the cap refuses a
// queue; the error names the live comms (the leak), and Host.Warnings says
// so when the second comm is made. Queues are placed as MORI's anvil places
// them (model.Engines.Place): over KFD's recommended masks, which leave out
// fused-off engines, loopback on engine 0, or spread over the host-link
// engines on gfx1250. With DevCommRequirements.ConnectQueues a dev comm
// creates its queues in DevCommCreate, as MORI's does; a refused creation
// is returned as a *QueueCreateError with the dev comm, and a program that
// ignores it and posts on the missing queue hangs with a report naming the
// failed creation (CauseQueueCreateFailed, connect.go).
//
// barrier.go has MORI's teams (World, Lsa, CrossNode, Rail, and the rank
// mappings) and LsaBarrierSession (arrive, wait, sync, and the timeout
// forms returning 1) at thread, warp or block scope (MORI's Coop), over a
// dev comm's LsaBarrier or HybridLsaBarrier (the hybrid barrier's
// intra-node half; its rail half, like the rail GDA barrier, crosses
// nodes and is disabled on one). A dev comm without SDMA queues
// does nothing on every call, as MORI does, and says so once
// (Host.Warnings).
//
// # Debug mode and failures
//
// With DevCommRequirements.Debug or MORI_CCO_SDMA_DEBUG, MORI's five checks
// (ring full behind the wave's own uncommitted batch, stalled commit chain,
// broken SameQueue promise, quiet with uncommitted Aggregate posts, bad
// srcRank) and the seed's (broadcast destinations not congruent mod 32,
// postWaitSignal expected ≥ 2^32, engine-side wait on non-local memory)
// stop the kernel at the offending call with a *kernel.LaneError naming the
// call, the lane and the rule. Checks 1 and 2 trap at once when the wait can
// only end by a commit the same wave owes, where MORI traps after 2^30 spins.
// Check 4 fires only when Aggregate posts are outstanding, not merely when
// another wave is mid-post. In release mode the symptoms are those of the
// hardware: silent no-ops, stale data, shifted broadcasts, early release,
// hangs. A hang ends in the simulator's report, to which this package adds
// typed causes (sim.Cause, layer sim.LayerAPI) naming the waiting ranks
// and the matching row of the seed's failure-mode table (the Row values): a
// condition the issuer or the engine already names (a full ring, a stalled
// commit chain, a parked POLL) is said once (sim.MergeCauses), in cco's
// words where cco knows why (an Aggregate batch) and with the row added
// by a note otherwise. These causes are asked for only when something
// waits (a passing run is not diagnosed). The records they come from
// (signals posted, uncommitted Aggregate bytes, waits) are kept, with a
// sim.Scratch, in the Scratch for the first host of the next run that
// borrows it, emptied, with the host's map of queue references. A comm
// holds its first four slots and windows and its first dev comm (with
// 16 queue pointers) itself, and region names are interned by the
// simulator's Scratch (sim.Sim.Intern).
//
// An out-of-range peer is refused in both modes (MORI does not check it and
// the hardware faults on a null queue handle). Debug mode also traps a put
// whose source and destination overlap (the spec's inferred extra; release
// moves the bytes with memmove semantics and the engine reports
// COPY_OVERLAP).
//
// # Memory from lane code
//
// Mem (NewMem) is how lane code loads and stores device memory: 8-, 16-,
// 32- and 64-bit loads and stores and byte ranges, through local pointers
// (Window.LocalPtr) and LSA peer pointers (Window.LsaPtr), plus
// release stores and acquire loads for flags. A bad address fails the
// kernel at the lane. Kernels should not touch engine.Memory while they
// run: Mem's accesses are the ones the race detector sees.
//
// # Race detector
//
// DevCommRequirements.Race (or MORI_CCO_SDMA_RACE) turns on the run's
// happens-before race detector (package race). Its edges here: a post
// releases the posting lane's wave to the queue's engine (the packet's
// writer and the doorbell's ringer); the engine's COPY reads and writes are
// accesses of the queue, chunk by chunk as they happen; an ATOMIC signal is
// a release that waitSignal and postWaitSignal (a POLL) acquire, and
// postWaitMem's POLL acquires the flag a lane stored with Mem's
// StoreRelease; quiet and quietQueue acquire the queue's completed packets;
// kernel launch and end, host waits (kernel.Wait) and SyncThreads order
// waves. A run in which two accesses to the same bytes, at least one a
// write, are not ordered ends with a *race.Error naming both (who, range,
// read or write, virtual time) and the missing edge in words, whether or
// not the data came out wrong in that run.
//
// The detector's signal-lifecycle checks (package race: a store over a
// signal, one slot shared by two producers the waits cannot tell apart, a
// wait counting an earlier epoch's signal, a counter or 32-bit wait that
// wraps) are on in debug mode too: a dev comm with Debug or
// MORI_CCO_SDMA_DEBUG and without Race turns the detector on for those
// findings alone (race.Detector.SetLifecycleOnly), so the run ends with a
// *race.Error that holds only them. Every ATOMIC and fused signal records
// its update of its slot, waitSignal, a POLL and a fused packet's wait the
// value they held on. The detector's cost comes with them: debug runs are
// as slow as race runs.
//
// # Time
//
// Engine costs come from the node's model (package engine). CU-side costs
// come from the same model through Device.Model (timing.go): a put-family
// post sleeps the wave for its issue cost (model.Issue of the post's
// shape) and its doorbell (Submit), an issuer that waited on the commit
// chain pays ChainObserve, quiet pays one RptrRead per queue, waitSignal
// SignalVisible after the slot reached its value. On real hardware
// (Device.Model nil) nothing sleeps: time passes by itself.
//
// # GIN over SDMA
//
// Sdma.PutSignals is not a ccoSdma call: it is what NCCL's GIN in C++
// (capi's nccl_gin.go) posts, as RCCL's Anvil backend lowers GIN inside a
// node. It posts a COPY (none for a bare signal) and then ATOMIC ADD64s
// at words the caller names with their values (the peer's signal, this
// rank's counter), not at the signal pool's slots; every lane posts its
// own (no wave grouping). Sdma.WaitWord is waitSignal on such a word, in
// NCCL's rolling compare, with a deadline if asked: the same wake-up, CU
// cost (SignalVisible), acquire and race-report record as waitSignal's.
//
// # Tracing
//
// Host.SetObserver attaches one Observer to the device's queues and to the
// device calls (CallBegin/CallEnd); package trace's Recorder is one.
package cco
