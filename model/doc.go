// Package model holds emud's timing models: how long the emulated hardware
// takes for each thing it does. The engine asks a [Model] for every
// duration; nothing in the engine hard-codes a time.
//
// This package currently ships one model, [Placeholder]: round numbers of the
// right shape taken from the seed document's MI355X measurements (about 2 µs
// of engine time per packet, a ~60 GB/s xGMI link, a few µs from doorbell to
// fetch). It is NOT calibrated: link sharing between concurrent copies,
// broadcast serialisation and issue costs are not modelled yet. The
// calibrated MI355X model, fitting and the calibration report are the timing
// model issue's work.
package model
