// Package layering holds the test of the house drawn from the imports:
// every top-level folder of the module stands on a floor, and a package
// imports only packages of its own floor or below (docs/architecture.md,
// "Layers"). The floors, and any arrow allowed to run up with the reason it
// must, are one table in layering_test.go; a new top-level folder fails the
// test until it has a floor there.
//
// Imports are read from the non-test Go files of every package (every
// build tag, cgo files included) with go/parser: test files may import
// anything, since a test binary is no part of the house. Imports between
// packages of one top-level folder (scenario/all of scenario, fabric of
// fabric/redop) are the folder's own business and are not checked; Go
// already refuses their cycles.
package layering
