//go:build !race

package racebuild

// Enabled is false: the binary was built without -race.
const Enabled = false
