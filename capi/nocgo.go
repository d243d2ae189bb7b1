//go:build !cgo

package main

import (
	"fmt"
	"os"
)

// Without cgo there is no C ABI to build: the package still compiles (so
// `CGO_ENABLED=0 go build ./...` works) and says why when run.
func main() {
	fmt.Fprintln(os.Stderr, "emud capi: the C ABI needs cgo (CGO_ENABLED=1 and a C compiler); build it with go build -buildmode=c-archive ./capi, or use emud c++")
	os.Exit(1)
}
