// Package calibrate judges a timing model against documented hardware
// measurements by running each one as a real scenario through the whole
// emulator: kernels call the ccoSdma API, packets go into rings, the engine
// executes them under the model, and the scenario reads the emulated clock
// where the benchmark read its clock.
package calibrate
