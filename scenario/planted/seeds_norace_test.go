//go:build !race

package planted_test

// blameSeeds is how many seeds TestReportsBlameNoHardwareWithoutFaults runs
// each planted scenario under (see seeds_race_test.go for the -race build).
const blameSeeds = 20
