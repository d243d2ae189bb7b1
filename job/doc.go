// Package job builds the host side of a MORI program on one emulated node,
// the chain every user of emud writes first: the simulator (sim.New), an
// MI355X node of one GPU per rank (engine.NewNode), the process's host
// (cco.NewEmulatedHost), one comm per rank (rank r on GPU r), then
// symmetric windows and dev comms, and kernels launched on a rank's GPU
// with their ccoSdma handles.
//
// cmd/emud's scenarios, the calibration benches and emutest's NewJob all
// build their jobs here, so a change to the chain (an environment
// variable, a default) is made once.
package job
