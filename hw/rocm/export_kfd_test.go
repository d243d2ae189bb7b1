//go:build rocm && cgo

package rocm

// SetKFDPathForTest points Open at path and returns the function that
// restores /dev/kfd.
func SetKFDPathForTest(path string) (restore func()) {
	old := kfdPath
	kfdPath = path
	return func() { kfdPath = old }
}
