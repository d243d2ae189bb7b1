// Package fileio is how emud's commands read and write the files users
// name: every read has a size bound, and every output is whole or absent.
//
// Reading: ReadFile and Open take a limit and the flag (or argument) the
// file came from; past the limit they fail with a *TooLargeError naming
// both, instead of reading on (emud calibrate --table /dev/zero and emud
// merge /dev/zero read until the process died "out of memory").
//
// Writing: WriteFile and Create write to a temporary file next to the
// target and rename it over the target only when everything was written,
// so an interrupted or failed run leaves the old file as it was, and no
// temporary file is left behind when the write or the rename fails.
package fileio
