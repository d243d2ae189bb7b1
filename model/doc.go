// Package model holds emud's timing models: how long the emulated hardware
// and the CU-side API take for each thing they do. The engine and cco ask a
// [Model] for every duration; nothing else hard-codes a time.
//
// # The mechanism
//
// [Params] is a mechanistic model with a handful of physical parameters.
// Every emulated time comes out of the emulated machine doing its work step
// by step under these parameters (package calibrate checks the result
// against every documented MI355X number):
//
//   - CU issue. A put-family post costs Issue(shape) cycles at ClockGHz
//     before the commit chain: IssueBase; plus IssueGroup, IssueScan per
//     doubling of lanes and IssueLane per extra lane when lanes share one
//     queue (one reservation, one doorbell); plus IssueDetect for
//     ccoSdmaThreadIndependent's run-time shape detection; plus IssueQueue
//     per doubling of distinct queues (each lane's own uncached reservation
//     and doorbell queue in the memory pipeline), up to IssueQueueOverlap
//     queues. Then Submit cycles (write pointer, release fence, doorbell).
//     An issuer that found the commit chain blocked pays ChainObserve after
//     its predecessor commits, so issuers on one queue serialise.
//   - CU reads. Quiet pays one UncachedRead per queue a lane visits (MORI
//     cco.hpp: about 2600 cycles per rptr read); waitSignal pays
//     SignalVisibleUs after the slot reaches expected (signal slots are
//     ordinary memory, cheaper than rptr); a CU polling a flag another
//     agent sets pays FlagRead cycles per read; a host store becomes visible
//     to the device HostStoreUs after it is made.
//   - Engine. The first packet after a doorbell on an idle queue is fetched
//     DoorbellUs later. A packet takes effect (and rptr moves past it) when
//     it starts, or for a COPY when its data has moved; the engine then
//     spends PacketUs (COPY, ATOMIC and the rest alike) or PollGapUs (after
//     a POLL_REGMEM) before the next packet: completion handshake and next
//     fetch. A parked POLL re-reads every PollInterval(iv) = iv × PollUnitUs.
//   - Data. A COPY moves its bytes over the directed path src → dst in
//     ChunkKiB chunks; each chunk occupies the path for chunk/bandwidth,
//     so copies sharing a path share Link (GPU pair, one xGMI direction) or
//     Local (same GPU), and copies on different paths run in parallel. A
//     broadcast writes its two destinations one after the other (one engine
//     does not overlap its two writes) at BcastLink / BcastLocal per
//     stream. CUCopy is a CU kernel's local copy bandwidth.
//   - Jitter spreads engine gaps and doorbell latencies by ±Jitter from the
//     run's seed (0 in the preset: calibration is judged without it).
//   - Timing perturbation is a layer over any model: [Perturbed] applies
//     the run's sim.Perturber (its level and spreads are documented there,
//     with their sources) to link rates and CU costs; the engine applies it
//     to its per-queue costs. Level 0, the default of "emud run" and of
//     calibration, leaves every number as fitted.
//
// # Where the MI355X numbers come from
//
// The preset [MI355X] is fitted to shared/calibration/mi355x-documented.csv
// (the seed document's measurements on gfx950, two ranks over intra-node
// xGMI) and to facts in shared/spec:
//
//   - ClockGHz 2.4: MI355X's peak engine clock; it also turns the seed's
//     64-packet issue (3220 cycles) into its 1.3 µs.
//   - Issue*: the seed's trigger-cycle table (SameQueue 1..64 lanes, spread
//     over 8 queues 1..8 lanes), least squares; UncachedRead 2600 from
//     MORI's cco.hpp comment.
//   - Submit + ChainObserve: the seed's 3.2× for 8 warps on one queue
//     against 8 queues; the split between them is not identified by any
//     documented number (Submit 244 cycles is a choice).
//   - DoorbellUs, Link: the bw.* rows fit t = issue + doorbell + B/link +
//     rptr read within 2%; PacketUs: engine.packet.64 and scatter.64x4k
//     (about 2 µs per packet, COPY and ATOMIC alike).
//   - PollGapUs: postWaitMemPutPtr with a wait that holds costs ~1.6 µs
//     over a plain put; PollUnitUs, FlagRead, HostStoreUs: the three
//     postwait.* latency pairs (flag set to copy complete, medians).
//   - SignalVisibleUs: wait.vs.quiet.8 (waitSignal 0.24 µs before quiet).
//   - BcastLink, BcastLocal: the three broadcast rows (38, 43, 68 GB/s);
//     any additive model puts local+remote at the harmonic mean of the
//     other two, so the three are balanced within ±8%.
//   - Local 200 GB/s (engine copy within one GPU) and CUCopy 7000 GB/s
//     (gather.local) have no other constraint.
//
// Two documented rows contradict others under any in-order engine; the
// calibration report names them (single.256k against bw.256k,
// wait.vs.quiet.64k against wait.vs.quiet.8). The "about 6 µs" small-op
// figure in the seed's prose is not a table row and contradicts the bw.*
// rows' 2.8 µs intercept; it is not used.
//
// [Placeholder] is the first, uncalibrated model (engine costs only, free
// CU issue); protocol tests that need issuers to outrun the engine use it.
//
// Models are pluggable: [Load] takes a preset name or the path of a JSON
// model file (the form [Params.WriteFile] writes and "emud fit" produces).
package model
