//go:build !rocm

package rocm_test

const buildWhy = "built without the rocm build tag"
