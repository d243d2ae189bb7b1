package cxx

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// PTXError is an inline-PTX statement of a CUDA source that emud does not
// emulate, or cannot read: the build fails naming the file, the line and
// the instruction.
type PTXError struct {
	File  string
	Line  int
	Instr string // the instruction (or the whole template) at fault
	Why   string
}

func (e *PTXError) Error() string {
	return fmt.Sprintf("%s:%d: inline PTX %q: %s (docs/cuda.md lists the instructions emud emulates)", e.File, e.Line, e.Instr, e.Why)
}

// RewritePTX turns the inline-PTX statements of a CUDA source (asm,
// __asm__, with or without volatile) into calls of emud's cuda_runtime.h
// (::emud::ptx), so they run as emulated memory operations with their
// memory-model meaning, keeping every line where it was:
//
//   - red.{sem}.{scope}[.global].{add,or,and,min,max}.{type} [%a], %v: an
//     atomic reduction (no result);
//   - atom.{sem}.{scope}[.global].{add,or,and,min,max,exch}.{type} %d, [%a], %v:
//     the same, returning the old value;
//   - ld.{acquire,relaxed,volatile}[.{scope}][.global].{type} %d, [%a];
//   - st.{release,relaxed,volatile}[.{scope}][.global].{type} [%a], %v;
//   - fence.{sc,acq_rel}.{scope} and membar.{cta,gl,sys}: a fence;
//   - nanosleep.u32 %t: nothing (virtual time moves at the next poll);
//   - an empty template (a compiler barrier): nothing.
//
// The types are u32, s32, b32, u64, s64, b64. Any other instruction, or a
// template of more than one instruction, is a *PTXError naming it, unless
// it sits in a conditional branch the compiler never sees (cond.go: #if 0,
// #if __CUDA_ARCH__ >= 900 and the like, since emud never defines the
// device pass's macros), which is left as written.
func RewritePTX(src []byte, file string) ([]byte, error) {
	toks := lex(src)
	c := scanConds(toks) // asm in a branch the compiler never sees (#if __CUDA_ARCH__ >= 900) is left as written
	var b bytes.Buffer
	at := 0
	for i := c.settle(0, true); i < len(toks); i = c.settle(i+1, true) {
		t := toks[i]
		if t.directive || t.kind != tokIdent || (t.text != "asm" && t.text != "__asm__" && t.text != "__asm") {
			continue
		}
		j := i + 1
		for j < len(toks) && (toks[j].text == "volatile" || toks[j].text == "__volatile__" || toks[j].text == "inline" || toks[j].text == "goto") {
			j++
		}
		if j >= len(toks) || toks[j].text != "(" {
			continue
		}
		end := matchParen(toks, j) + 1 // one past the ")"
		if end == 0 {
			return nil, &PTXError{file, t.line, "asm", "unbalanced parentheses"}
		}
		text, err := ptxCall(src, toks[j+1:end-1], file, t.line)
		if err != nil {
			return nil, err
		}
		b.Write(src[at:t.start])
		b.WriteString(text)
		b.WriteString(lineBreaks(src[t.start:toks[end-1].end]))
		at = toks[end-1].end
		i = end - 1
	}
	b.Write(src[at:])
	return b.Bytes(), nil
}

// ptxOperand is one "constraint"(expr) of an asm statement.
type ptxOperand struct {
	constraint string
	expr       string
}

// ptxCall reads an asm statement's inside (template : outputs : inputs :
// clobbers) and returns the C++ expression that does what it does.
func ptxCall(src []byte, toks []token, file string, line int) (string, error) {
	// The template: adjacent string literals.
	var tmpl strings.Builder
	k := 0
	for ; k < len(toks) && toks[k].kind == tokString; k++ {
		s, err := strconv.Unquote(toks[k].text)
		if err != nil {
			return "", &PTXError{file, line, toks[k].text, "the template is not a plain string literal"}
		}
		tmpl.WriteString(s)
	}
	if k == 0 {
		return "", &PTXError{file, line, "asm", "no instruction template"}
	}
	// The operand lists, split at top-level colons ("::" lexes as one token:
	// an empty list between two colons).
	var lists [][]ptxOperand
	var cur []ptxOperand
	for k < len(toks) {
		switch s := toks[k].text; s {
		case ":":
			lists = append(lists, cur)
			cur = nil
			k++
		case "::":
			lists = append(lists, cur, nil)
			cur = nil
			k++
		case ",":
			k++
		default:
			if toks[k].kind != tokString || k+1 >= len(toks) || toks[k+1].text != "(" {
				if len(lists) >= 3 { // clobbers: strings only
					k++
					continue
				}
				return "", &PTXError{file, line, tmpl.String(), "an operand is not \"constraint\"(expression)"}
			}
			c, _ := strconv.Unquote(toks[k].text)
			e := matchParen(toks, k+1)
			if e < 0 {
				return "", &PTXError{file, line, tmpl.String(), "an operand's parentheses do not close"}
			}
			if e == k+2 {
				return "", &PTXError{file, line, tmpl.String(), "an operand with no expression"}
			}
			cur = append(cur, ptxOperand{c, string(src[toks[k+2].start:toks[e].start])})
			k = e + 1
		}
	}
	lists = append(lists, cur)
	// lists[0] is what stands between the template and the first colon
	// (nothing); then outputs, inputs, clobbers.
	var ops []ptxOperand // %0, %1, ...: outputs, then inputs
	for _, l := range lists[1:min(len(lists), 3)] {
		ops = append(ops, l...)
	}
	return ptxInstr(strings.TrimSpace(tmpl.String()), ops, file, line)
}

var ptxTypes = map[string]string{"u32": "uint32_t", "s32": "int32_t", "b32": "uint32_t", "u64": "uint64_t", "s64": "int64_t", "b64": "uint64_t"}

var ptxOrders = map[string]string{
	"relaxed": "__ATOMIC_RELAXED", "volatile": "__ATOMIC_RELAXED", "acquire": "__ATOMIC_ACQUIRE",
	"release": "__ATOMIC_RELEASE", "acq_rel": "__ATOMIC_ACQ_REL", "sc": "__ATOMIC_SEQ_CST",
}

var ptxScopes = map[string]bool{"cta": true, "cluster": true, "gpu": true, "sys": true}

var ptxRmw = map[string]bool{"add": true, "or": true, "and": true, "min": true, "max": true, "exch": true}

// ptxInstr lowers one instruction (its operands %N are ops[N]).
func ptxInstr(tmpl string, ops []ptxOperand, file string, line int) (string, error) {
	instr := strings.TrimSuffix(strings.TrimSpace(tmpl), ";")
	if strings.ContainsAny(instr, ";{}") {
		return "", &PTXError{file, line, firstInstr(tmpl), "a template of several instructions is not emulated; write one asm statement per instruction"}
	}
	if instr == "" {
		// asm volatile("" ::: "memory"): a compiler barrier, nothing to
		// emulate (lanes run one at a time).
		return "(void)0", nil
	}
	opcode, rest, _ := strings.Cut(instr, " ")
	opcode = strings.TrimSpace(opcode)
	no := func(why string) (string, error) { return "", &PTXError{file, line, opcode, why} }
	var args []string
	for _, a := range strings.Split(rest, ",") {
		if a = strings.TrimSpace(a); a != "" {
			args = append(args, a)
		}
	}
	// operand returns the expression of "%N" (addr: "[%N]").
	operand := func(a string, addr bool) (string, error) {
		if addr {
			if !strings.HasPrefix(a, "[") || !strings.HasSuffix(a, "]") {
				return "", fmt.Errorf("%q is not an address operand [%%N]", a)
			}
			a = strings.TrimSpace(a[1 : len(a)-1])
		}
		n, err := strconv.Atoi(strings.TrimPrefix(a, "%"))
		if !strings.HasPrefix(a, "%") || err != nil || n < 0 || n >= len(ops) {
			return "", fmt.Errorf("%q is not an operand %%0..%%%d", a, len(ops)-1)
		}
		return "(" + ops[n].expr + ")", nil
	}
	switch opcode {
	case "membar.cta", "membar.gl", "membar.sys":
		if strings.TrimSpace(rest) != "" {
			return no("membar takes no operand")
		}
		return "::emud::ptx::fence(__FILE__, __LINE__, __func__)", nil
	}
	parts := strings.Split(opcode, ".")
	if len(parts) < 2 {
		return no("the instruction is not emulated")
	}
	last := parts[len(parts)-1]
	typ := ptxTypes[last]
	mid := parts[1 : len(parts)-1]
	// sem [scope] [.global] [op]
	sem, scope := "", ""
	var rmw string
	for _, p := range mid {
		switch {
		case ptxOrders[p] != "" && sem == "":
			sem = p
		case ptxScopes[p] && scope == "":
			scope = p
		case p == "global":
		case ptxRmw[p] && rmw == "":
			rmw = p
		default:
			return no(fmt.Sprintf("the qualifier .%s is not emulated", p))
		}
	}
	order := ptxOrders[sem]
	if order == "" {
		order = "__ATOMIC_RELAXED"
	}
	want := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%d operands, want %d", len(args), n)
		}
		return nil
	}
	site := "__FILE__, __LINE__, __func__"
	switch parts[0] {
	case "red", "atom":
		if typ == "" || rmw == "" || (parts[0] == "red" && rmw == "exch") {
			return no("not an emulated reduction (red/atom .add .or .and .min .max [.exch] of u32, s32, b32, u64, s64, b64)")
		}
		if sem == "acquire" && parts[0] == "red" {
			return no("red has no acquire form")
		}
		n := 2
		if parts[0] == "atom" {
			n = 3
		}
		if err := want(n); err != nil {
			return no(err.Error())
		}
		a, err := operand(args[n-2], true)
		if err != nil {
			return no(err.Error())
		}
		v, err := operand(args[n-1], false)
		if err != nil {
			return no(err.Error())
		}
		call := fmt.Sprintf("::emud::ptx::rmw<%s>(::emud::ptx::op_%s, (uint64_t)(uintptr_t)%s, (%s)%s, %s, %s)", typ, rmw, a, typ, v, order, site)
		if parts[0] == "red" {
			return "(void)" + call, nil
		}
		d, err := operand(args[0], false)
		if err != nil {
			return no(err.Error())
		}
		return fmt.Sprintf("%s = (std::remove_reference_t<decltype%s>)%s", d, d, call), nil
	case "ld":
		if typ == "" || rmw != "" || sem == "release" || sem == "acq_rel" || sem == "sc" {
			return no("not an emulated load (ld.acquire, ld.relaxed or ld.volatile of u32, s32, b32, u64, s64, b64)")
		}
		if err := want(2); err != nil {
			return no(err.Error())
		}
		d, err := operand(args[0], false)
		if err != nil {
			return no(err.Error())
		}
		a, err := operand(args[1], true)
		if err != nil {
			return no(err.Error())
		}
		return fmt.Sprintf("%s = (std::remove_reference_t<decltype%s>)::emud::ptx::ld<%s>((uint64_t)(uintptr_t)%s, %s, %s)", d, d, typ, a, order, site), nil
	case "st":
		if typ == "" || rmw != "" || sem == "acquire" || sem == "acq_rel" || sem == "sc" {
			return no("not an emulated store (st.release, st.relaxed or st.volatile of u32, s32, b32, u64, s64, b64)")
		}
		if err := want(2); err != nil {
			return no(err.Error())
		}
		a, err := operand(args[0], true)
		if err != nil {
			return no(err.Error())
		}
		v, err := operand(args[1], false)
		if err != nil {
			return no(err.Error())
		}
		return fmt.Sprintf("::emud::ptx::st<%s>((uint64_t)(uintptr_t)%s, (%s)%s, %s, %s)", typ, a, typ, v, order, site), nil
	case "fence":
		if len(args) != 0 || (sem != "sc" && sem != "acq_rel") || rmw != "" || typ != "" {
			return no("not an emulated fence (fence.sc or fence.acq_rel with a scope)")
		}
		return "::emud::ptx::fence(" + site + ")", nil
	case "nanosleep":
		if opcode != "nanosleep.u32" || len(args) != 1 {
			return no("not nanosleep.u32 %t")
		}
		return "(void)0", nil
	}
	return no("the instruction is not emulated")
}

// firstInstr is the first instruction of a template, for an error.
func firstInstr(tmpl string) string {
	s := strings.TrimLeft(tmpl, " \t\n{")
	if i := strings.IndexAny(s, ";\n"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
