//go:build race

package planted_test

// blameSeeds is how many seeds TestReportsBlameNoHardwareWithoutFaults runs
// each planted scenario under in a -race build, fewer than the plain
// build's 20: under Go's race detector the sweep (over a thousand runs of
// emud's own detector) took the test binary to 2.1 GB of peak RSS and six
// minutes. What -race is for here, Go data races in emud's own code, shows
// on any seed; CI's plain run of the test keeps all 20 seeds.
const blameSeeds = 4
