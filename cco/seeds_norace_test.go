//go:build !race

package cco_test

// seeds is how many seeds every scenario runs under (see
// seeds_race_test.go for the -race build).
const seeds = 20
