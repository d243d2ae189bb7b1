//go:build !rocm

package rocm

const buildReason = "the ROCm backend is not in this binary: it was built without the rocm build tag; " +
	"rebuild with -tags rocm and cgo on (CGO_ENABLED=1, a C compiler, libhsakmt headers and library)"
