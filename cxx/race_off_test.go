//go:build !race

package cxx

// raceBuild: this test binary is built with Go's race detector.
const raceBuild = false
