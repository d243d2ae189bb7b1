//go:build cgo

package main

import (
	"fmt"
	"syscall"
	"unsafe"
)

// hostRange checks that [p, p+n) is mapped in this process before a HIP
// copy or memset reads or writes it as host memory: a null, wild or
// unmapped (freed large allocation) pointer is an error naming the call
// and the argument, where touching it would crash the whole program with
// a Go runtime dump and no line of the user's. mincore(2) fails with
// ENOMEM when any page of the range is unmapped; it says nothing of
// permissions, so a read-only page written to still faults (partial).
func hostRange(call, what string, p, n uint64) error {
	if n == 0 {
		return nil
	}
	if p == 0 {
		return fmt.Errorf("%s %s is a null host pointer", call, what)
	}
	if p+n < p {
		return fmt.Errorf("%s %s %#x with %d bytes runs past the end of the address space", call, what, p, n)
	}
	const page = 4096
	var vec [4096]byte // one byte a page: 16 MiB a syscall
	start := p &^ (page - 1)
	end := (p + n + page - 1) &^ (page - 1)
	for a := start; a < end; {
		k := min(end-a, uint64(len(vec))*page)
		_, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(a), uintptr(k), uintptr(unsafe.Pointer(&vec[0])))
		if e != 0 {
			return fmt.Errorf("%s %s %#x (%d bytes) is not mapped host memory: a null, freed or wild pointer (it is no device allocation either)", call, what, p, n)
		}
		a += k
	}
	return nil
}
