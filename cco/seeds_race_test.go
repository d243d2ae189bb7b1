//go:build race

package cco_test

// seeds is how many seeds every scenario runs under in a -race build, fewer
// than the 20 of the plain build. The largest tests run 8192 lanes at once;
// under Go's race detector each lane's goroutine (kernel's shared workers)
// keeps a history that grows with every seed it runs, and 20 seeds took the
// test binary to 2.6 GB of peak RSS (4 seeds: 1.6 GB). What -race is for
// here, Go data races in emud's own code, shows on any seed; every seed's
// assertions are the same, and CI's plain build (EMUD_TEST_RACE=1 go test
// ./cco/) still runs all 20 seeds under emud's own detector.
const seeds = 4
