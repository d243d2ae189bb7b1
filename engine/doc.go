// Package engine emulates the devices below the ccoSdma API: each GPU's
// memory in one flat LSA address space, and the SDMA queues that fetch rung
// packets from their rings and execute them.
//
// # Memory
//
// A [Node] has GPUs 0..n−1. GPU g's memory is the slice
// [Base + g·Stride, Base + (g+1)·Stride) of one flat address space, as MORI
// lays out LSA windows (perRankSize rounded up to 4 GiB;
// docs/cco-semantics.md §2.1). Only allocated regions are backed: an
// access anywhere else is a VM hole. Every write notifies the memory's watch list,
// so waiters on a flag or signal slot are woken by the write itself.
// By default regions are process memory: Go bytes below 1 MiB, anonymous
// mappings outside the Go heap from 1 MiB (hostmem), so a run's
// resident memory is about its emulated bytes and the race detector keeps
// no shadow of them; [Node.Close] gives them back (after it every access
// fails naming the closed node), and a node nobody closes gives them back
// once unreachable (hostmem keeps up to its KeepMax of them for the next
// node's regions of the same size). Such a kept mapping is not cleared
// when it backs a new region: the region is marked stale
// (lsa.Space.MarkStale) and each 256 B granule is zeroed when an access
// first reaches it, except those a copy, Write or Fill overwrites whole,
// so that an all-to-all's receive windows are written once a seed (by the
// copies), not twice; every access sees a fresh region as zero all the
// same. A region allocated after [Memory.Prefill] (or
// [Memory.PrefillContent], the content as one value) starts with the
// caller's content; kept by that content
// when no write reached it, it backs the next node's Prefill of the same
// content without the bytes being written again (a scenario's send
// windows, the same for every seed). A COPY's landing copies through
// lsa.Space.Land, which hashes the bytes into a range [Memory.TrackSum]
// tracks right after copying them (a receive check's blocks: the check
// then reads none back); TrackSum is refused on a Config.Backing, which
// native code writes without notifying. A region whose [Content] has
// Blocks is referred to them, not written (lsa.Space.Refer), and is
// pristine until a write reaches it; a COPY from pristine content whose
// destination is whole 256 B granules of memory only lsa reaches lands by
// reference instead (lsa.Space.LandRef): the bytes are copied in when an
// access first reaches them, and a receive check that compares sums never
// moves them. Neither happens on a Config.Backing. Config.Backing = [MapAt] maps each
// region at its own address for native lanes. A node given a [Scratch]
// (Config.Scratch: an explore worker's, kept across its seeds) takes its
// small regions from it instead of the heap and makes its queues, rings,
// issuer sides, engines and links in its arenas; Close gives them back
// (zeroed as the next node takes them), so nothing of a closed node is
// used after Close (its counters stay its own, for a registry that took
// its collector); its Sim field lends the simulator its event store
// (sim.Scratch). A ring buffer kept across nodes is cleared only as far
// as its writes reached ([ring.Ring.Dirty]).
//
// # Queues
//
// A [Queue] is one SDMA queue of GPU g toward peer p with queue id q,
// loopback (p == g) included. It owns a [ring.Ring] holding the real gfx9
// packet bytes. The issuer side is the embedded [issuer.Queue]
// (Reserve, Submit, Commit, AwaitDrained: MORI's ring protocol,
// docs/sdma-hardware.md §3, written once for this emulator and the ROCm
// backend); the engine is its [issuer.Port], so a doorbell store reaches
// the engine at once and a read-pointer write-back wakes the waiting
// issuers. The engine side executes [rptr, doorbell) strictly in order,
// one packet at a time. Durations come from a [model.Model].
//
// # Architectures and the fused packets
//
// A node runs the packets of its model's architecture (model.ArchOf:
// gfx950 for MI355X, gfx1250 for its preset): the ring decodes that
// dialect, and a packet the architecture lacks halts the queue with an
// illegal-instruction fault naming the architecture. fused.go runs the
// packets that carry their own wait and signal (COPY_LINEAR_WAIT_SIGNAL,
// compact on gfx1250), the multicast copy (one read, N writes at the
// broadcast stream rate), the swap and the indirect copy, each as one packet
// with one gap after it. A raw COPY whose byte count overflows the 30-bit
// count moves what the truncated count says (ring.CheckCopyBytes names it).
// Node.CommQueue and Node.DestroyQueue give comms queues of their own and
// free them; an engine refuses a queue beyond KFD's per-engine limit (8 on
// gfx950, 6 on gfx1250) naming the engine and the limit.
// conformance_test.go checks three classes of emulator bug against broken
// variants (a fixed-length decoder, a livelocking poll, a completion waiter
// woken by the doorbell instead of the completion).
//
// # Engines
//
// Each GPU has a set of SDMA [Engine]s (model.Engines: 2 general and 14
// xGMI engines, 8 queues each, on MI355X). A queue is placed on one engine
// as MORI places its channels over KFD's recommended engines
// (model.Engines.Place: loopback on engine 0, or spread over the host-link
// engines on gfx1250, channel c toward a peer on the (c mod 2)-th of that
// link's two engines; a model can give a platform's own link-to-engine map
// instead, and fused-off engines are absent from the masks). A queue on an
// engine that already holds its cap (the runtime's queues included), or on
// a fused-off engine, is refused with an error naming why. An engine serves one of
// its queues at a time, round-robin by time slice, switching only between
// packets; a packet's execution and the gap after it are engine time, so
// queues sharing an engine share its packet rate, while the data moves on
// the directed path, shared with every other copy on it. The whole
// queue/engine state machine is in sdma.go.
//
// Packet semantics (docs/sdma-hardware.md §2, §5, §6):
//   - COPY moves real bytes chunk by chunk as they cross the link, in
//     address order (the granule is the model's LinkChunk, the link-sharing
//     chunk): a load during a copy sees the chunks landed so far, and a
//     store to a source chunk not yet read is what gets sent. Within a
//     chunk the bytes land in 256 B bursts (Burst). Where nothing can tell
//     when a crossed chunk landed (no waiter or tracked word on it, no
//     other copy in flight meeting its ranges, no race detector, no
//     native Backing), its move waits for the next access to memory or
//     the copy's last chunk and is done in one memmove with the chunks
//     before it (data.go): an 8 MiB COPY then costs about a copy().
//     Every access lands what is due first, so what it sees is unchanged.
//     An overlap is reported as a COPY_OVERLAP event because hardware leaves it
//     undefined; emud then moves all bytes when the COPY completes, with
//     memmove semantics.
//   - Broadcast COPY writes both destinations. When they are not congruent
//     mod 32 the second stream lands at (dst2 &^ 31) + (dst1 & 31), so dst2's
//     range is wrong and up to 31 neighbouring bytes are overwritten: the
//     seed's rule, with the [inferred] placement model of the spec.
//   - ATOMIC is one read-modify-write (ADD64 and every other 32/64-bit op
//     the decoder names; the loop/CMPSWAP retry bound is not modelled).
//   - POLL_REGMEM compares 32 bits of memory under the mask, unsigned. A
//     failing poll parks the queue: a subscription on the polled word, with
//     re-reads only at multiples of the poll interval after the packet
//     started (so a value that flips back between reads is missed, as on
//     hardware). A finite retry count expires after retry+1 failed reads
//     into a POLL_TIMEOUT event; the queue then continues with the next
//     packet (or halts, by Config.PollTimeout) — the spec's [inferred] rule.
//   - FENCE stores 32 bits; TRAP raises a TRAP event; TIMESTAMP (get local
//     or global) stores a 64-bit counter at Config.TimestampHz.
//   - WRITE_LINEAR stores its inline dwords; CONST_FILL fills dwords.
//
// Faults are [Fault] values naming the queue, ring offset, decoded packet and
// address. VM holes, misaligned atomics, illegal or unsupported packets halt
// the queue (rptr stays on the packet) and, unless Config.KeepGoingOnFault,
// stop the run with the fault as its error; the Go process never panics.
// TRAP, POLL_TIMEOUT, DOORBELL_INVALID and COPY_OVERLAP are events that do
// not stop the queue. A packet whose header is rung but whose body is not
// (the doorbell points into it) stalls the queue until more is rung, as a
// fetcher waiting on wptr would.
//
// The read pointer is written back per packet by default; [RptrPerBurst]
// writes it back every few packets and on drain; [RptrOnDrain] only when the
// queue drains (gem5's behaviour), so a queue parked on a poll never
// publishes progress. Hardware's cadence is unspecified (docs/sdma-hardware.md
// §3.5), so tests can choose.
//
// When a run hangs, the node's diagnoser (sim.Sim.AddDiagnoser, layer
// sim.LayerEngine) returns every queue that has rung
// work it cannot run (parked on a poll, stalled, faulted) with its
// pointers, decoded head packet and, for a poll, the value now in memory,
// and names known misuse as typed causes (sim.Cause): the issuer side's
// (issuer.CauseRingFull, CauseChainStalled, CauseChainJumped) and the
// engine's own ([CausePollParked], [CauseStalled], [CauseHalted],
// [CauseInjected]), each naming its queue and its layer (sim.LayerIssuer,
// sim.LayerEngine), so a higher layer (cco) can say the same condition in
// its own words or add the misuse-table row it matches, and sim.MergeCauses
// says it once. The node's memory keeps a write log (Memory.Log,
// sim.WriteLog): the last writes of the words waits watch (a parked POLL's
// word, cco's signal slots and flags), each named by its writer (a queue's
// packet and, when the issuer labelled it, the lane that posted it
// (issuer.Queue.Posted); a lane; the host), so a parked POLL whose flag
// was set and reset names both writes, a signal names the block that
// posted it, and [Node.InjectedDrops] says whether the fault plan
// dropped a signal toward an address.
//
// # Foreign producers
//
// Packets need not come from the issuer protocol. A producer that writes
// its own stream (ROCr's blit kernels, a captured or generated packet
// stream) maps the stream's addresses with [Memory.AllocAt], makes its
// queue with its own ring size and start offset ([Node.NewQueue]), writes
// the bytes into the ring at the write pointer (Ring().Write), stores the
// write pointer ([Queue.StoreWptr]) and rings the doorbell
// ([Queue.RingDoorbell]). The engine decodes whatever the bytes say;
// packets need not be unit-aligned. See the NewQueue example, which runs a
// ROCr-style stream (dependency polls, COPY, ATOMIC −1, FENCE, TRAP).
//
// Concurrent copies share a directed path chunk by chunk (timing.go).
//
// Fault injection (Config.Inject, an [InjectPlan] given explicitly, as a
// spec string [ParseInject] reads, or drawn from the seed by [SeededPlan])
// plants what real SDMA systems have shown: a signal ATOMIC dropped (a
// lost completion), an engine stalled on copies at or above a size (it
// stays held, so every queue on it stops), a queue on a dead engine,
// doorbells lost or delayed, read-pointer write-backs that lag. Each
// injected fault is raised as a non-halting [Fault] (report, metrics,
// trace) and a hang names it among its causes.
//
// Under the run's timing perturbation (sim.Config.Perturb) each engine's
// packet gaps and each queue's doorbell latency are scaled by a factor
// drawn once per run per engine (or queue) and once per use, and a parked
// POLL's re-read ticks start at a random phase of their interval; link
// rates and CU costs are perturbed through the model (model.Perturbed).
//
// With the run's race detector on (sim.EnableRace, package race) each
// queue's engine is a detector thread: a packet is ordered after its
// writer and its doorbell, a COPY's chunk reads and writes are its
// accesses as they happen, ATOMIC and FENCE release, a POLL that holds
// acquires, and quiet acquires the engine's clock at the drained packet
// (race.go).
//
// # Clients
//
// A producer that lowers another API onto a queue (package fabric's GIN
// over SDMA) sets itself as the queue's [Client] (Queue.SetClient): it is
// told of each packet's retirement, and with the detector on it gives the
// threads the packet's writes and reads run on (the API's operation, whose
// edges are the API's rules, not the queue's order), the space the node's
// addresses are tracked in (the API's own memory) and the words a report
// uses. Its memory's writes reach its own waiters through
// lsa.Space.SetOnNotify.
package engine
