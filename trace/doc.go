// Package trace records an emulated run as Chrome trace-event JSON, the
// format the Perfetto UI (ui.perfetto.dev) and chrome://tracing open.
//
// [Attach] hooks a [Recorder] onto an engine.Node (engine.Node.SetObserver;
// the node's cco calls come through cco.CallObserver). From then on it
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
//   - flow events ("s", "t", "f", one category and name, "bp":"e" on the
//     end) from the call that rang a packet's doorbell, through the packet,
//     to the first waiter its write woke, plus a packet → waiter flow for
//     every further waiter. A waiter is a waitSignal whose signal slot the
//     packet wrote last (an ATOMIC, FENCE, WRITE_LINEAR, CONST_FILL or
//     TIMESTAMP at that address) after the call began, a quiet/quietQueue
//     for which the packet was the last one a drained queue retired during
//     the call, or a parked POLL_REGMEM whose word the packet wrote;
//   - doorbells and engine faults/events as process-scoped instants ("i",
//     "s":"p"): on a queue's thread track an instant would nest inside the
//     running packet and capture its flows.
//
// Times are virtual: sim.Time picoseconds written as microseconds with six
// fraction digits, so nothing below a microsecond is lost (Perfetto keeps
// nanoseconds). Events are written sorted by time, each flow event right
// after the slice it binds to, inside that slice's span, so viewers that
// bind a flow to the topmost open slice (Perfetto) and those that bind by
// time (catapult) agree, even for slices that take no virtual time. The
// output is deterministic: the same seed gives the same bytes.
//
// How the links are found: the engine reports doorbells and retired packets
// (engine.Observer) and Submit reports the actor that rings; cco reports
// each call's entry and return (cco.CallObserver). A packet's issuing call
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
// or halted when the trace is written (a fault shows as an instant). With
// no recorder attached, the engine's hook points are nil checks and the
// cco wrapper a type switch: nothing is allocated on the packet path (go
// test -bench EngineCopy64 ./engine/).
package trace
