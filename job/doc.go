// Package job builds the host side of a MORI program on one emulated node,
// the chain every user of emud writes first: the simulator (sim.New), an
// MI355X node of one GPU per rank (engine.NewNode), the process's host
// (cco.NewEmulatedHost), one comm per rank (rank r on GPU r), then
// symmetric windows and dev comms, and kernels launched on a rank's GPU
// with their ccoSdma handles.
//
// The scenarios (package scenario's Env), the calibration benches and
// emutest's NewJob all build their jobs here, so a change to the chain (an
// environment variable, a default) is made once.
//
// A job given an engine.Scratch (Config.Scratch: an explore worker's)
// lends it to the node and the simulator, and its launches take their
// state (a kernel.Code) and their lanes' ccoSdma handles from an arena
// kept in the sim.Scratch, reset at the run's first launch; Close hands
// the node's objects back, so read what the run says before the
// worker's next job.
//
// NewFabric is the same for the CFT fabric (package fabric): a simulator,
// a system of N ranks, every rank's comm, dev comm and the same list of
// symmetric windows, and Launch of one block per rank; the fabric's tests
// and the CFT scenarios (scenario/cft) build on it.
package job
