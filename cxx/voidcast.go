package cxx

import "strings"

// Casts of kernels to void pointers. HIP's and CUDA's launches of a
// kernel passed as `(const void*)kernel` with `void** args`
// (hipLaunchKernel, hipLaunchCooperativeKernel, cudaLaunchKernel,
// cudaLaunchCooperativeKernel) need the kernel's parameter types, which
// emud finds by registering the kernel where the program casts it:
// Rewrite turns the operand X of such a cast into
// `::emud::kernel_addr(X, "X")` (include/emud-forced/emud_kernel_addr.h), which
// returns X as it was (a data pointer's cast means what it meant) and
// registers a function returning void. The casts rewritten: `(void*)X`
// and `reinterpret_cast<void*>(X)`, with const or volatile, where X is
// a name, optionally qualified and preceded by &, optionally in
// parentheses, and with template arguments when its last name is a
// kernel the file declares (`__global__`), and not spelled as a macro
// (no lower-case letter) unless it is such a kernel; a postfix operator after X
// (a call, a subscript, a member, ++, --) leaves the cast as it is, as
// the cast applies to that whole expression. A `(void*)` that follows a
// name, `)`, `]` or `>` is a parameter list (`f(void*)`,
// `std::function<void(void*)>`), not a cast.

// castKeywords are identifiers that may come right before a cast (not a
// function whose parameter list the parentheses would be).
var castKeywords = map[string]bool{"return": true, "throw": true, "case": true, "else": true, "do": true,
	"co_return": true, "co_yield": true, "co_await": true, "and": true, "or": true, "not": true}

// notOperands are identifiers that are no name to register.
var notOperands = map[string]bool{"this": true, "nullptr": true, "true": true, "false": true, "sizeof": true,
	"alignof": true, "new": true, "delete": true, "static_cast": true, "reinterpret_cast": true, "const_cast": true,
	"dynamic_cast": true, "typeid": true, "decltype": true, "noexcept": true, "operator": true, "__null": true,
	"const": true, "volatile": true, "void": true, "int": true, "char": true, "unsigned": true, "long": true}

// kernelNames are the names the file declares __global__.
func kernelNames(toks []token) map[string]bool {
	skip := map[string]bool{"__launch_bounds__": true, "__attribute__": true, "__declspec": true, "alignas": true,
		"__align__": true, "decltype": true, "__cluster_dims__": true}
	names := map[string]bool{}
	for i, t := range toks {
		if t.text != "__global__" {
			continue
		}
		for j := i + 1; j < len(toks); j++ {
			s := toks[j].text
			if s == ";" || s == "{" || s == "}" {
				break
			}
			if s == "[" || (toks[j].kind == tokIdent && skip[s] && j+1 < len(toks) && toks[j+1].text == "(") {
				if s != "[" {
					j++
				}
				j = closeOf(toks, j)
				if j < 0 {
					break
				}
				continue
			}
			if toks[j].kind == tokIdent && j+1 < len(toks) && toks[j+1].text == "(" {
				names[s] = true
				break
			}
		}
	}
	return names
}

// closeOf is the index of the bracket closing the one at open, or -1.
func closeOf(toks []token, open int) int {
	depth := 0
	for k := open; k < len(toks); k++ {
		switch toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

// voidPointer matches `cv void cv * cv` from toks[j]: the index after it,
// or -1.
func voidPointer(toks []token, j int) int {
	cv := func(k int) int {
		for k < len(toks) && (toks[k].text == "const" || toks[k].text == "volatile") {
			k++
		}
		return k
	}
	j = cv(j)
	if j >= len(toks) || toks[j].text != "void" {
		return -1
	}
	j = cv(j + 1)
	if j >= len(toks) || toks[j].text != "*" {
		return -1
	}
	return cv(j + 1)
}

// castOperand reads the operand of a cast from toks[j]: its first and
// last tokens and its name (without & and parentheses), or ok false when
// it is not one emud rewrites.
func castOperand(src []byte, toks []token, j int, kernels map[string]bool) (first, last int, name string, ok bool) {
	first = j
	paren := j < len(toks) && toks[j].text == "("
	if paren {
		j++
	}
	if j < len(toks) && toks[j].text == "&" {
		j++
	}
	n0 := j
	if j < len(toks) && toks[j].text == "::" {
		j++
	}
	for {
		if j >= len(toks) || toks[j].kind != tokIdent || notOperands[toks[j].text] || toks[j].directive != toks[first].directive {
			return 0, 0, "", false
		}
		if j+1 < len(toks) && toks[j+1].text == "::" {
			j += 2
			continue
		}
		break
	}
	base := toks[j].text
	if !kernels[base] && macroName(base) {
		// Likely a macro, whose text may be an expression the cast binds
		// into (`#define AT p + 4`): wrapping it would change what the
		// cast applies to.
		return 0, 0, "", false
	}
	if j+1 < len(toks) && toks[j+1].text == "<" {
		if !kernels[base] {
			return 0, 0, "", false // a comparison, or a template emud cannot tell
		}
		depth := 0
		k := j + 1
		for ; k < len(toks); k++ {
			switch toks[k].text {
			case "<", "(", "[":
				depth++
			case ">", ")", "]":
				depth--
			case ";", "{", "}":
				return 0, 0, "", false
			}
			if depth == 0 {
				break
			}
		}
		if k >= len(toks) {
			return 0, 0, "", false
		}
		j = k
	}
	nameEnd := j
	if paren {
		if j+1 >= len(toks) || toks[j+1].text != ")" {
			return 0, 0, "", false
		}
		j++
		// `(T)x`: the parentheses were a cast of their own, not X's.
		if k := j + 1; k < len(toks) && !strings.Contains("),;]}?:", toks[k].text) {
			return 0, 0, "", false
		}
	}
	// A postfix operator binds tighter than the cast: X is not the operand.
	if k := j + 1; k < len(toks) && toks[k].directive == toks[first].directive {
		switch s := toks[k].text; s {
		case "(", "[", ".", "::":
			return 0, 0, "", false
		case "-":
			if k+1 < len(toks) && (toks[k+1].text == ">" || toks[k+1].text == "-") && toks[k+1].start == toks[k].end {
				return 0, 0, "", false
			}
		case "+":
			if k+1 < len(toks) && toks[k+1].text == "+" && toks[k+1].start == toks[k].end {
				return 0, 0, "", false
			}
		}
	}
	return first, j, oneLine(string(src[toks[n0].start:toks[nameEnd].end])), true
}

// voidCastEdits are the edits of the casts to void pointers in toks.
func voidCastEdits(src []byte, toks []token, c *conds) []sharedEdit {
	kernels := kernelNames(toks)
	var edits []sharedEdit
	for i := c.settle(0, true); i < len(toks); i = c.settle(i+1, true) {
		t := toks[i]
		if t.directive && !inDefine(toks, i) {
			continue
		}
		var op int
		switch {
		case t.text == "(":
			if i > 0 && toks[i-1].directive == t.directive {
				p := toks[i-1]
				if p.kind == tokIdent && !castKeywords[p.text] || p.text == ")" || p.text == "]" || p.text == ">" {
					continue
				}
			}
			e := voidPointer(toks, i+1)
			if e < 0 || e >= len(toks) || toks[e].text != ")" {
				continue
			}
			op = e + 1
		case t.text == "reinterpret_cast":
			if i+1 >= len(toks) || toks[i+1].text != "<" {
				continue
			}
			e := voidPointer(toks, i+2)
			if e < 0 || e+1 >= len(toks) || toks[e].text != ">" || toks[e+1].text != "(" {
				continue
			}
			op = e + 2
		default:
			continue
		}
		first, last, name, ok := castOperand(src, toks, op, kernels)
		if !ok || t.text == "reinterpret_cast" && (last+1 >= len(toks) || toks[last+1].text != ")") {
			continue
		}
		for k := op; k <= last; k++ {
			if c.isCond(k) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		lit := `"` + strings.ReplaceAll(name, `"`, "") + `"`
		if t.directive {
			// In a macro the name may be a parameter, replaced there:
			// the kernel is named by its address instead (DWARF).
			lit = "nullptr"
		}
		edits = append(edits, sharedEdit{toks[first].start, toks[first].start, "::emud::kernel_addr("},
			sharedEdit{toks[last].end, toks[last].end, ", " + lit + ")"})
	}
	return edits
}

// macroName says s is spelled as macros are: no lower-case letter.
func macroName(s string) bool { return strings.ToUpper(s) == s }

// inDefine says toks[i], on a directive line, is in a #define's body.
func inDefine(toks []token, i int) bool {
	k := i
	for k > 0 && toks[k-1].directive && !(toks[k].text == "#" && toks[k].line != toks[k-1].line) {
		k--
	}
	return toks[k].text == "#" && k+1 < len(toks) && toks[k+1].text == "define"
}
