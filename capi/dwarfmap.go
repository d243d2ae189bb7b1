//go:build cgo

package main

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lineDWARF opens the program's DWARF for its line tables. It maps the
// executable read-only and hands debug/dwarf slices of the mapping, where
// elf.File.DWARF reads every .debug_* section (put.cpp against the
// MORI-shaped header: 4.9 MB read into the Go heap, loclists and frame
// included, a tenth of a run's CPU) though a line lookup touches a few
// pages of .debug_info and one unit's line program. A program whose
// debug sections are compressed takes elf's copying path.
func lineDWARF(path string, shared bool) (*dwarf.Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, err
	}
	// Not PIE: run-time addresses are the table's. A seed form (shared)
	// is, and its caller subtracts the load bias.
	if ef.Type != elf.ET_EXEC && !(shared && ef.Type == elf.ET_DYN) {
		return nil, errors.New("position-independent executable")
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	mapped, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return ef.DWARF()
	}
	d, err := mappedDWARF(ef, mapped)
	if err != nil {
		_ = syscall.Munmap(mapped)
		return ef.DWARF()
	}
	return d, nil // mapped for the life of the process, as d's slices are
}

// errCopy sends lineDWARF to elf's own reader.
var errCopy = errors.New("a debug section needs elf's reader")

// mappedDWARF builds the line tables' dwarf.Data over the mapped file: the
// sections DWARF 4 and 5 units and line programs read, none of them
// compressed (errCopy otherwise).
func mappedDWARF(ef *elf.File, mapped []byte) (*dwarf.Data, error) {
	sec := func(name string) ([]byte, error) {
		s := ef.Section(name)
		if s == nil {
			if ef.Section(".zdebug_"+name[len(".debug_"):]) != nil {
				return nil, errCopy
			}
			return nil, nil
		}
		if s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil, errCopy
		}
		if s.Offset > uint64(len(mapped)) || s.Size > uint64(len(mapped))-s.Offset {
			return nil, fmt.Errorf("%s outside the file", name)
		}
		return mapped[s.Offset : s.Offset+s.Size : s.Offset+s.Size], nil
	}
	var b [5][]byte
	for i, n := range []string{".debug_abbrev", ".debug_info", ".debug_line", ".debug_ranges", ".debug_str"} {
		var err error
		if b[i], err = sec(n); err != nil {
			return nil, err
		}
	}
	if b[1] == nil {
		return nil, errors.New("no .debug_info")
	}
	d, err := dwarf.New(b[0], nil, nil, b[1], b[2], nil, b[3], b[4])
	if err != nil {
		return nil, err
	}
	for _, n := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
		s, err := sec(n)
		if err != nil {
			return nil, err
		}
		if s != nil {
			if err := d.AddSection(n, s); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}
