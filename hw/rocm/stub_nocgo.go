//go:build rocm && !cgo

package rocm

const buildReason = "the ROCm backend is not in this binary: it was built with -tags rocm but without cgo " +
	"(CGO_ENABLED=0 or no C compiler); rebuild with CGO_ENABLED=1 against libhsakmt"
