// Package signal models ccoSdma signal pools and the bookkeeping of expected
// counts.
//
// Each GPU owns a pool of lsaSize × queueCount 64-bit slots, zeroed when the
// pool is created and never reset. Slots are indexed by sender:
// slot(sender, q) = pool base + 8 × (sender × queueCount + q). A sender's
// localSignal lands in its own pool at its own row, its remoteSignal in the
// peer's pool at the same row (MORI cco.hpp, ccoSdmaDispatchPut; see
// docs/cco-semantics.md §3). Signals are incremented by SDMA ATOMIC
// ADD64 packets placed after the COPY on the same queue, so seeing a count
// implies the data before it landed.
//
// [Expected] keeps one running total per (source rank, queue id) pair, the
// discipline the seed document requires: a single counter shared across
// queues waits forever.
package signal
