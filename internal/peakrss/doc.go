// Package peakrss reads a process's peak resident memory: the VmHWM line
// of /proc/PID/status (Linux). The test binaries' bound (internal/testmain)
// and the bench's children (which cannot trust their rusage: a vfork's
// exec keeps the parent's peak) read it here.
package peakrss
