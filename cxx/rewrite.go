package cxx

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
)

// Rewrite turns HIP source into host C++ for emud, keeping every line
// where it was (so compiler messages and __builtin_LINE name the
// original lines; the output starts with a #line directive naming file):
//
//   - a launch `callee<<<cfg>>>(args)`, where callee is a name, a
//     qualified name or a template-id, becomes
//     `::emud::launch(::emud::cfg(cfg), "callee", [=](auto&... a) { callee(a...); }, args)`
//     (a generic lambda, so template kernels with deduced arguments launch);
//     launches inside macros (over several lines) and lambdas are plain
//     text to it and are rewritten the same way;
//   - `__shared__ T name[dims];` becomes a reference to the block's
//     static shared storage, and `extern __shared__ T name[];` a pointer
//     to the block's dynamic shared memory sized at launch;
//   - a cast of a name to a void pointer, `(const void*)kernel`, becomes
//     the same cast of `::emud::kernel_addr(kernel, "kernel")`, which
//     registers a kernel for launches by its address (voidcast.go).
//
// Preprocessor conditionals are honoured (cond.go): a dead branch (`#if
// 0`) is left as it is, and each branch of an unknown condition is
// rewritten on its own.
//
// Errors name the line: a `<<<` with no callee before it or no `>>>(`
// after it.
func Rewrite(src []byte, file string) ([]byte, error) {
	toks := lex(src)
	c := scanConds(toks)
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for i := c.settle(0, true); i < len(toks); i = c.settle(i+1, true) {
		t := toks[i]
		switch {
		case t.text == "<<<":
			c0 := calleeStart(toks, i)
			if c0 < 0 {
				return nil, fmt.Errorf("%s:%d: <<< with no kernel name before it", file, t.line)
			}
			// the matching >>> at paren depth 0
			j, depth, straight := c.next(i), 0, c.next(i) == i+1
			for ; j < len(toks); j = c.next(j) {
				straight = straight && c.next(j) == j+1
				s := toks[j].text
				if s == "(" || s == "[" || s == "{" {
					depth++
				} else if s == ")" || s == "]" || s == "}" {
					depth--
				} else if s == ">>>" && depth == 0 {
					break
				}
			}
			if j >= len(toks) || c.next(j) >= len(toks) || toks[c.next(j)].text != "(" {
				return nil, fmt.Errorf("%s:%d: kernel launch: no >>>( after <<<", file, t.line)
			}
			if c.next(j) != j+1 {
				return nil, fmt.Errorf("%s:%d: kernel launch: a preprocessor conditional between >>> and (: emud rewrites `>>>(` as one piece", file, t.line)
			}
			close := c.matchParen(toks, j+1)
			if close < 0 {
				return nil, fmt.Errorf("%s:%d: kernel launch: unbalanced parentheses in the arguments", file, t.line)
			}
			callee := string(src[toks[c0].start:toks[i-1].end])
			name := strings.Join(strings.Fields(callee), " ")
			keepNL := lineBreaks(src[toks[c0].start:t.end]) // the callee's and any before <<<
			edits = append(edits, edit{toks[c0].start, t.end, "::emud::launch(::emud::cfg(" + keepNL})
			empty := c.next(j+1) == close
			sep := ", "
			if empty {
				sep = ""
			}
			// Line breaks between >>> and ( stay, so diagnostics keep their lines.
			gapNL := lineBreaks(src[toks[j].start:toks[j+1].end])
			edits = append(edits, edit{toks[j].start, toks[j+1].end, fmt.Sprintf(`), %q, [=](auto&... emud_a_) { %s(emud_a_...); }%s%s`, name, oneLine(callee), sep, gapNL)})
			if straight {
				i = j + 1
			} // else the walk goes on inside the launch's branch, to the next branch's launch
		case t.text == "__shared__" && !t.directive:
			e, err := sharedDecl(src, toks, c, i, file)
			if err != nil {
				return nil, err
			}
			if e.text != "" {
				edits = append(edits, edit(e))
			}
		}
	}
	for _, e := range voidCastEdits(src, toks, c) {
		edits = append(edits, edit(e))
	}
	// Branches of a conditional are walked in turn, and a launch's scan
	// may run past its branch's #endif: edits come out of order, and a
	// launch head shared by two branches' paths is edited once.
	sort.SliceStable(edits, func(a, b int) bool { return edits[a].start < edits[b].start })
	var b bytes.Buffer
	fmt.Fprintf(&b, "#line 1 %q\n", file)
	at := 0
	for k, e := range edits {
		if k > 0 && e == edits[k-1] {
			continue
		}
		if e.start < at {
			// A callee read back over an earlier launch (`f(k<<<…>>>())><<<…`):
			// not a launch emud can rewrite.
			return nil, fmt.Errorf("%s:%d: kernel launch: the kernel name before <<< runs into an earlier launch", file, lineAt(src, e.start))
		}
		b.Write(src[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.Write(src[at:])
	return b.Bytes(), nil
}

// lineBreaks is the line breaks of span as a replacement must keep them:
// a break continued with a backslash (inside a macro) stays continued, so
// the macro does not end there.
func lineBreaks(span []byte) string {
	var b strings.Builder
	for i, c := range span {
		if c != '\n' {
			continue
		}
		if i > 0 && span[i-1] == '\\' || i > 1 && span[i-1] == '\r' && span[i-2] == '\\' {
			b.WriteString("\\\n")
		} else {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// lineAt is the 1-based line of byte offset off.
func lineAt(src []byte, off int) int { return 1 + bytes.Count(src[:off], []byte("\n")) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// calleeStart returns the index of the first token of the callee that
// ends just before toks[i] ("<<<"): a name with :: qualifiers and
// template arguments <...>, or -1.
func calleeStart(toks []token, i int) int {
	k := i - 1
	for k >= 0 {
		if toks[k].directive != toks[i].directive {
			return -1 // a directive line's words are not the callee
		}
		if toks[k].text == ">" {
			// template arguments: back to the matching <
			depth := 0
			for ; k >= 0; k-- {
				switch toks[k].text {
				case ">", ">>", ")", "]":
					depth++
				case "<", "(", "[":
					depth--
				}
				if depth == 0 {
					break
				}
			}
			k--
			if k < 0 {
				return -1
			}
		}
		if toks[k].kind != tokIdent {
			return -1
		}
		if k > 0 && toks[k-1].text == "::" {
			k -= 2
			if k < 0 || toks[k].kind != tokIdent && toks[k].text != ">" {
				return k + 1 // a leading :: (global qualifier)
			}
			continue
		}
		return k
	}
	return -1
}

type sharedEdit struct {
	start, end int
	text       string
}

// sharedType is the declared type of a __shared__ variable, its tokens
// ts, on one line: CUDA's __align__(n) is left out, as the rewrite casts
// to the type and emud's shared storage is 16-byte aligned already (an
// attribute in a cast does not compile).
func sharedType(src []byte, ts []token) string {
	if !slices.ContainsFunc(ts, func(t token) bool { return t.text == "__align__" }) {
		return oneLine(string(src[ts[0].start:ts[len(ts)-1].end]))
	}
	var b strings.Builder
	for k := 0; k < len(ts); k++ {
		if ts[k].text == "__align__" && k+1 < len(ts) && ts[k+1].text == "(" {
			depth := 0
			for k++; k < len(ts); k++ {
				if ts[k].text == "(" {
					depth++
				} else if ts[k].text == ")" {
					if depth--; depth == 0 {
						break
					}
				}
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(oneLine(string(src[ts[k].start:ts[k].end])))
	}
	return b.String()
}

// sharedDecl rewrites the __shared__ declaration whose keyword is toks[i].
func sharedDecl(src []byte, toks []token, c *conds, i int, file string) (sharedEdit, error) {
	t := toks[i]
	// the start: "extern" / "static" right before (possibly both)
	s0, ext := i, false
	for s0 > 0 && (toks[s0-1].text == "extern" || toks[s0-1].text == "static") {
		if toks[s0-1].text == "extern" {
			ext = true
		}
		s0--
	}
	// the declaration ends at ";"
	j := i + 1
	for j < len(toks) && toks[j].text != ";" {
		if c.isCond(j) {
			return sharedEdit{}, fmt.Errorf("%s:%d: __shared__ declaration split by a preprocessor conditional: put the whole declaration in each branch", file, t.line)
		}
		if toks[j].text == "=" || toks[j].text == "," || toks[j].text == "{" {
			return sharedEdit{}, fmt.Errorf("%s:%d: __shared__ declaration: emud rewrites `__shared__ T name[dims];` (one name, no initializer, as HIP requires)", file, t.line)
		}
		j++
	}
	if j >= len(toks) {
		return sharedEdit{}, fmt.Errorf("%s:%d: __shared__ declaration with no ;", file, t.line)
	}
	// name: the last identifier before the first "[" (or before ";")
	d := j
	for k := i + 1; k < j; k++ {
		if toks[k].text == "[" {
			d = k
			break
		}
	}
	n := d - 1
	if n <= i || toks[n].kind != tokIdent {
		return sharedEdit{}, fmt.Errorf("%s:%d: __shared__ declaration: no variable name", file, t.line)
	}
	if n-1 < i+1 { // `__shared__ name;`: checked before the type is sliced out
		return sharedEdit{}, fmt.Errorf("%s:%d: __shared__ declaration: no type", file, t.line)
	}
	// One line each: the rewrite repeats them, and nl keeps the lines.
	typ := sharedType(src, toks[i+1:n])
	name := toks[n].text
	dims := ""
	if d < j {
		dims = oneLine(string(src[toks[d].start:toks[j-1].end]))
	}
	nl := lineBreaks(src[toks[s0].start:toks[j].end])
	if ext {
		if strings.ReplaceAll(dims, " ", "") != "[]" {
			return sharedEdit{}, fmt.Errorf("%s:%d: extern __shared__ %s must be an unsized array (T %s[])", file, t.line, name, name)
		}
		return sharedEdit{toks[s0].start, toks[j].end, fmt.Sprintf("%s* const %s = (%s*)::emud::dyn_shared();%s", typ, name, typ, nl)}, nil
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s:%d", file, t.start)
	full := fmt.Sprintf("%s%s", typ, dims)
	if dims == "" {
		full = typ
	}
	return sharedEdit{toks[s0].start, toks[j].end, fmt.Sprintf("auto& %s = *(::emud::shared_t<%s>*)::emud::shared(%#xull, sizeof(::emud::shared_t<%s>), alignof(::emud::shared_t<%s>));%s",
		name, full, h.Sum64(), full, full, nl)}, nil
}
