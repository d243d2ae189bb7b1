// Package trace records an emulated run as Chrome trace-event JSON, the
// format the Perfetto UI (ui.perfetto.dev), chrome://tracing, the Chrome
// DevTools performance panel and speedscope open.
//
// [Attach] hooks a [Recorder] onto an engine.Node and its cco.Host
// (cco.Host.SetObserver, which reaches the node's queues too; with no host,
// engine.Node.SetObserver). From then on it
// keeps every doorbell, every packet the SDMA engines execute, every ccoSdma
// device call a wave makes, and which packet woke which waiter.
// [Recorder.WriteJSON] writes them in the JSON object form of the Trace
// Event Format ({"traceEvents": [...], "displayTimeUnit": "ns", ...}):
//
//   - one process per GPU (pid = GPU + 1, named "GPU g": some viewers take
//     pid 0 for the idle process);
//   - one thread track per SDMA queue, named "GPU 0 → 3 q1" (GPU 0's queue
//     toward peer 3, queue id 1), and one per wave that made a device call,
//     named "wave b0w0 (kernel name)"; thread ids are unique across the
//     trace, and process_sort_index / thread_sort_index put queues before
//     waves;
//   - a complete ("X") slice per executed packet on its queue's track, from
//     the moment the engine fetched it to its completion (a POLL_REGMEM
//     slice includes the time it was parked), named by the packet kind
//     (COPY_LINEAR, ATOMIC, POLL_REGMEM, ...) with args bytes, src, dst,
//     addr, ring_offset and the decoded packet; padding NOPs inside a 32 B
//     unit are not packets and get none;
//   - a complete slice per device call on the wave's track (put, get,
//     putPtr, putBroadcast, postWaitMem..., commit, quiet, quietQueue,
//     waitSignal), from entry to return, so a blocked wait shows as a long
//     slice; args give the rank, active lanes, peers, queues and bytes;
//   - inside a waiter that a packet woke (a call, or a parked POLL_REGMEM),
//     a "wake" slice from each distinct wake to the next or to the waiter's
//     end, args.by naming the packets (a quiet over several queues shows
//     one per queue that drained last);
//   - flow events ("s", "t", "f" with "bp":"e": v1 flows, which Perfetto,
//     catapult and the DevTools trace engine all read; Perfetto's
//     bind_id/flow_in/flow_out are Perfetto-only) from the call that rang a
//     packet's doorbell, through the packet, to the wake slice of the
//     first waiter its write woke, plus a packet → waiter flow for every
//     further waiter. A waiter is a waitSignal whose signal slot the packet
//     wrote last (an ATOMIC, FENCE, WRITE_LINEAR, CONST_FILL or TIMESTAMP
//     at that address) after the call began, a quiet/quietQueue for which
//     the packet was the last one a drained queue retired during the call,
//     or a parked POLL_REGMEM whose word the packet wrote;
//   - doorbells and engine faults/events as process-scoped instants ("i",
//     "s":"p", categories sdma.doorbell and sdma.fault): on a queue's
//     thread track an instant would nest inside the running packet.
//
// Every event has a category: "sdma" on every slice and flow event (the
// DevTools trace engine binds a flow event only to a slice of its own
// category, and one flow spans wave and queue tracks), "__metadata" on the
// M events, as Chrome writes them.
//
// Times: sim.Time picoseconds rounded to the nanosecond (monotone, so
// slices that nest or are disjoint in picoseconds still are, and adjacent
// slices touch), written in microseconds as the multiple of 2⁻¹¹ µs nearest
// to that nanosecond (within 1/4 ns; 11 decimals at most, exact). Float64
// viewers (DevTools, speedscope) then compute ts + dur and any shift
// exactly, and Perfetto's round(µs × 1000) gives back the nanoseconds of
// ts, dur and ts + dur. Plain nanoseconds (3 decimals) would not do:
// 15.597 + 1.422 is not 17.019 in float64.
//
// Binding: each flow event sits at the start of the slice it binds to, on
// its track, with args.slice_id naming it (every slice has a unique
// args.slice_id). There Perfetto's rule (the innermost slice open on the
// track; events at one ts sorted E, then X longest first, then the rest in
// file order) and DevTools' (the first event of the track with the same
// ts and category) pick the same slice, provided no other slice of the
// track starts in the same nanosecond. The writer therefore lays each
// track out on lanes: its slices in start order (longer first), each on
// the first lane where it nests or is disjoint and starts at a time no
// other slice there does (a wake slice tries its waiter's lane first).
// Lanes past the first are thread tracks of their own, named "NAME (+k)"
// and counted in otherData's overflow_lanes; only calls or packets that
// take no time need them (the placeholder model's free CU issue), never
// the default model. So on every thread track the slices nest or are
// disjoint and their starts differ, by construction (speedscope, too,
// would end a zero-length slice that starts with a longer one before it
// begins). A flow's times must strictly increase (Perfetto needs time
// order, DevTools keeps one event per time in a flow), so a wake slice
// starts at the nanosecond after its waker's start if the waker took no
// time, and in the waiter's last nanosecond if the wake is at its end (a
// wake slice of no length would share its start with the wave's next
// call). A waiter that returns in the nanosecond its zero-length waker
// ran leaves no room for that: the chain is cut before the link, counted
// in otherData's flow_links_dropped (the placeholder model has some; the
// default has none). Package tracecheck checks all of this on a written
// trace; CI also loads every scenario's trace in the DevTools trace engine
// and speedscope.
//
// The output is deterministic: the same seed gives the same bytes.
//
// How the links are found: the engine reports doorbells and retired packets
// (issuer.Observer) and Submit reports the actor that rings; cco reports
// each call's entry and return (cco.Observer). A packet's issuing call
// is the one that rang the first doorbell beyond it; a commit, whose ring
// names no actor, is matched by the queues it rings. A packet posted with
// Aggregate is therefore linked to the commit that rang it, not to the put
// that wrote it. Wakers are inferred, not observed: the last qualifying
// write or retire after the call began and before it returned, so a write
// that lands during the CU time a call spends after its wait (the model's
// SignalVisible, RptrRead) would be taken for the waker.
//
// What is not recorded: waves that make no device call (the kernel package
// has no hook; cco wraps its own calls), kernel-level waits between calls
// (SyncThreads, ballots), host actors, COPY destinations as wakers (a wait
// on a flag that a COPY lands is not linked), and packets still executing
// or halted when the trace is written (a fault shows as an instant), and
// time below the nanosecond. With
// no recorder attached, the engine's hook points are nil checks and the
// cco wrapper a type switch: nothing is allocated on the packet path (go
// test -bench EngineCopy64 ./engine/).
package trace
