package cxx

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A user's own MORI. When an include directory the user gives (-I,
// -isystem, -idirafter) holds mori/cco/cco.hpp, sources compile against
// that header instead of emud's stand-in: MORI's device code runs in the
// lanes over emud's HIP layer, with the AMDGCN builtins it calls given by
// emud/amdgcn.h (included first), and the program links emud's host
// control plane for it (include/emud/mori_host.cpp, compiled against the
// same header, so it fills MORI's structures at that header's own
// offsets). emud's include directory then lends only hip/ and emud/, from
// a directory of links, so the user's mori/ is the one found.

// MoriHeader is the path of the mori/cco/cco.hpp that a compile with
// flags finds on its include path, or "" when no user include directory
// holds one (emud's own header is then used, also when a -I names emud's
// include directory).
func MoriHeader(flags []string) string {
	for _, dir := range includeDirs(flags) {
		h := filepath.Join(dir, "mori", "cco", "cco.hpp")
		if b, err := os.ReadFile(h); err == nil && !bytes.Contains(b, []byte("#define EMUD_MORI_CCO_HPP")) { // emud's own stand-in is not a user's
			if abs, err := filepath.Abs(h); err == nil {
				return abs
			}
			return h
		}
	}
	return ""
}

// includeDirs lists the include directories flags give (-I, -isystem,
// -idirafter), in order.
func includeDirs(flags []string) []string {
	var dirs []string
	for i := 0; i < len(flags); i++ {
		f, dir := flags[i], ""
		switch {
		case f == "-I" || f == "-isystem" || f == "-idirafter":
			if i+1 < len(flags) {
				dir, i = flags[i+1], i+1
			}
		case strings.HasPrefix(f, "-isystem"):
			dir = f[len("-isystem"):]
		case strings.HasPrefix(f, "-idirafter"):
			dir = f[len("-idirafter"):]
		case strings.HasPrefix(f, "-I"):
			dir = f[len("-I"):]
		}
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// hasSpdlog says whether spdlog/spdlog.h is on the include path that
// flags give, or in the system's include directories.
func hasSpdlog(flags []string) bool {
	for _, dir := range append(includeDirs(flags), "/usr/include", "/usr/local/include") {
		if _, err := os.Stat(filepath.Join(dir, "spdlog", "spdlog.h")); err == nil {
			return true
		}
	}
	return false
}

// moriIncludes returns the include flags of a compile against the user's
// MORI header h: a directory in tmp that links emud's hip/ and emud/ (but
// not its mori/), emud/amdgcn.h included first, and the macros a HIP
// device compile of MORI's header tests. When spdlog is nowhere on the
// include path, the directory lends emud's mori/utils/mori_log.hpp too
// (MORI's includes spdlog, a submodule of MORI's checkout that a user
// pointing at MORI's include/ often has not built): MORI's tests that log
// (test_host, test_gda_modes) then build, logging through emud's
// spdlog-free twin; with spdlog there, MORI's own header is used.
func moriIncludes(root, tmp, h, arch string, flags []string) ([]string, error) {
	dir := filepath.Join(tmp, "emud-include")
	if _, err := os.Stat(dir); err != nil {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		for _, d := range []string{"hip", "emud", "emud-forced"} {
			if err := os.Symlink(filepath.Join(root, "include", d), filepath.Join(dir, d)); err != nil {
				return nil, fmt.Errorf("emud c++: %w", err)
			}
		}
		if !hasSpdlog(flags) {
			utils := filepath.Join(dir, "mori", "utils")
			if err := os.MkdirAll(utils, 0o755); err != nil {
				return nil, err
			}
			if err := os.Symlink(filepath.Join(root, "include", "mori", "utils", "mori_log.hpp"), filepath.Join(utils, "mori_log.hpp")); err != nil {
				return nil, fmt.Errorf("emud c++: %w", err)
			}
		}
	}
	fl := []string{"-I", dir, "-include", "emud/amdgcn.h", "-D__HIPCC__=1", "-D__EMUD_USER_MORI__=1",
		"-DEMUD_MORI_HEADER=\"" + h + "\""}
	switch {
	case arch == "gfx1250":
		fl = append(fl, "-D__gfx1250__=1") // MORI picks wave32 and the release-fence publish by it
	default:
		// emud's lanes run in waves of 64 for any other arch (hip_runtime.h's
		// warpSize), and a HIP compile for gfx9 defines __GFX9__, by which
		// MORI's core utils.hpp defines its own warpSize 64. Without it MORI
		// took 32: a kernel's "warp" (threadIdx.x / warpSize) was half a
		// wave, and ccoGda's warp-aggregated posting grouped two contexts'
		// lanes into one ballot, posting one context's WQE slot on the
		// other's queue (MORI's test_gda_multi_context).
		fl = append(fl, "-D__GFX9__=1")
		if strings.HasPrefix(arch, "gfx9") {
			fl = append(fl, "-D__"+arch+"__=1")
		}
	}
	return fl, nil
}

// moriHost compiles emud's host control plane against the user's MORI
// header h into tmp and returns the object. A header that lacks (or
// renamed) a field or call the control plane fills fails here, and the
// error names the header and the compiler's complaints.
func (o Options) moriHost(cc, root, tmp, h string, inv *Invocation) (string, error) {
	incl, err := moriIncludes(root, tmp, h, inv.Arch, inv.Flags)
	if err != nil {
		return "", err
	}
	obj := filepath.Join(tmp, "emud-mori-host.o")
	cmd := append(incl, "-I", filepath.Dir(filepath.Dir(filepath.Dir(h))))
	// The user's macros configure the header as in the user's sources
	// (a layout may depend on them); BUILD_CCO_SDMA is on whatever they say.
	for i := 0; i < len(inv.Flags); i++ {
		f := inv.Flags[i]
		switch {
		case (f == "-D" || f == "-U") && i+1 < len(inv.Flags):
			cmd = append(cmd, f+inv.Flags[i+1])
			i++
		case strings.HasPrefix(f, "-D") || strings.HasPrefix(f, "-U"):
			cmd = append(cmd, f)
		}
	}
	// EMUD_HOST_UNIT: host code only, not a unit whose lane code goes
	// unlogged (hip_runtime.h's note; it is built without TSan).
	cmd = append(cmd, "-UBUILD_CCO_SDMA", "-DBUILD_CCO_SDMA=1", "-DEMUD_HOST_UNIT=1", "-std=c++17", "-O1")
	cmd = append(cmd, seedFlags(cc)...)
	cmd = append(cmd, "-x", "c++", "-c", filepath.Join(root, "include", "emud", "mori_host.cpp"), "-o", obj)
	var errs bytes.Buffer
	o2 := o
	o2.Stderr = &errs
	if err := o2.run(cc, cmd, ""); err != nil {
		var lines []string
		for _, l := range strings.Split(errs.String(), "\n") {
			if strings.Contains(l, "error:") {
				lines = append(lines, "  "+strings.TrimSpace(l))
			}
		}
		if extra := unknownFields(h, errs.String()); len(extra) > 0 {
			lines = append(extra, lines...)
		}
		if len(lines) > 8 {
			lines = append(lines[:8], fmt.Sprintf("  (%d more)", len(lines)-8))
		}
		return "", fmt.Errorf("emud c++: the MORI header %s does not declare what emud fills (emud fills MORI's structures by field name in include/emud/mori_host.cpp; a field or call missing or renamed there is a MORI version emud does not support):\n%s", h, strings.Join(lines, "\n"))
	}
	return obj, nil
}

// unknownFields names, for each structure emud's layout check refused
// (a static_assert whose message starts "emud-layout: S: " and lists the
// fields emud fills), the fields header h declares in S that emud does not
// fill: the fields a MORI version added.
func unknownFields(h, compilerOut string) []string {
	var out []string
	src, err := os.ReadFile(h)
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(compilerOut, "\n") {
		i := strings.Index(l, "emud-layout: ")
		if i < 0 || !strings.Contains(l, "error:") {
			continue
		}
		name, known, ok := strings.Cut(l[i+len("emud-layout: "):], ": ")
		if !ok {
			continue
		}
		knows := map[string]bool{}
		for _, f := range strings.Fields(known) {
			knows[f] = true
		}
		for _, f := range structFields(src, name) {
			if !knows[f.name] {
				out = append(out, fmt.Sprintf("  %s:%d: field %s of %s is not one emud fills (it fills %s)", h, f.line, f.name, name, strings.Join(strings.Fields(known), ", ")))
			}
		}
	}
	return out
}

type field struct {
	name string
	line int
}

// structFields returns the data members of the first definition of
// struct name in a C++ source: the declarations at the struct's own brace
// depth that are not functions, types or static members.
func structFields(src []byte, name string) []field {
	toks := lex(src)
	start := -1
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].text == "struct" && toks[i+1].text == name && toks[i+2].text == "{" {
			start = i + 3
			break
		}
	}
	if start < 0 {
		return nil
	}
	var out []field
	var stmt []token
	skip := false // the statement has a body or parameters: not a data member
	depth := 1
	for _, t := range toks[start:] {
		if t.directive {
			continue
		}
		switch t.text {
		case "{":
			depth++
			skip = true
			continue
		case "}":
			depth--
			if depth == 0 {
				return out
			}
			if depth == 1 {
				stmt, skip = nil, false // a member function's body ends its declaration
			}
			continue
		}
		if depth > 1 {
			continue
		}
		if t.text == ":" && len(stmt) == 1 && (stmt[0].text == "public" || stmt[0].text == "private" || stmt[0].text == "protected") {
			stmt = nil // an access label, not part of a declaration
			continue
		}
		if t.text != ";" {
			stmt = append(stmt, t)
			if t.text == "(" {
				skip = true
			}
			continue
		}
		if !skip && len(stmt) > 0 {
			switch stmt[0].text {
			case "static", "using", "typedef", "template", "friend", "enum", "struct":
			default:
				n := -1
				for k, tk := range stmt {
					if tk.text == "[" || tk.text == ":" || tk.text == "=" {
						break
					}
					if tk.kind == tokIdent {
						n = k
					}
				}
				if n >= 0 {
					out = append(out, field{stmt[n].text, stmt[n].line})
				}
			}
		}
		stmt, skip = nil, false
	}
	return out
}

// moriLinkHint explains a link that failed on MORI's host calls: objects
// compiled against a user's MORI header need emud's control plane, which
// the link adds only when its own -I finds that header.
func moriLinkHint(flags []string, linkErr []byte) string {
	if MoriHeader(flags) != "" || !bytes.Contains(linkErr, []byte("mori::cco::cco")) {
		return ""
	}
	return " (objects compiled against your own mori/cco/cco.hpp link with emud's host control plane for it only when the link line has the same -I and -D flags: docs/mori-headers.md)"
}

// callContextFlags are the flags that give lane code compiled against a
// user's MORI header its call context (hip_runtime.h, EMUD_CALL_CONTEXT):
// every device call and atomic access records the lane's frames, from the
// frame-pointer chain, so the lanes of a wave are ordered by the whole
// chain rather than by the line of the helper that made the call (MORI's
// waveBallot, reached from several places, is one line). Frame pointers,
// no inlining and no sibling calls keep one stack frame per source frame,
// and the line tables (-g1, unless the flags have a -g) map them to lines.
func callContextFlags(flags []string) []string {
	fl := []string{"-DEMUD_CALL_CONTEXT=1", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-fno-inline"}
	for _, f := range flags {
		if strings.HasPrefix(f, "-g") && f != "-g0" {
			return fl
		}
	}
	return append(fl, "-g1")
}
