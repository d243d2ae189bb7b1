// Package standin is a KFD stand-in that executes and times what it is
// given: a hw/rocm Driver whose queues are run by emud's emulated SDMA
// engine (package engine) under a timing model, on the same simulator as
// the backend's issuers.
//
// hw/rocm's own StandIn consumes rung bytes without executing them: it
// proves the queue path (ring bytes, pointer and doorbell order) without a
// GPU. This one goes further for the measurement path: the ring memory the
// backend writes is the engine queue's ring, the write pointer and
// doorbell stores ring that queue, the engine writes the read pointer back
// into the resource's word as KFD's engine writes Queue_read_ptr, and
// every allocation the backend backs is engine memory at the same
// address. So TIMESTAMP packets read the engine's clock, copies move
// bytes, and a calibration sweep run through hw/rocm over this driver
// measures the "hardware" a hidden timing model describes: the test of
// `emud calibrate --measure` recovering known parameters.
//
// Limits: one process, the emulated MI355X layout (8 queue ids per GPU
// pair, the default LSA base and stride), and the engine's placement of
// queues on engines (docs/sdma-hardware.md), not KFD's.
package standin
