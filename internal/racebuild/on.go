//go:build race

package racebuild

// Enabled is true: the binary was built with -race.
const Enabled = true
