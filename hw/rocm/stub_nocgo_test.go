//go:build rocm && !cgo

package rocm_test

const buildWhy = "built with -tags rocm but without cgo"
