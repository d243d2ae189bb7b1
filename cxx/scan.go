package cxx

import (
	"os"
	"sync"
)

// tokens of C++ source, enough for the rewriter and the loop finder:
// identifiers, numbers, punctuation (one character, or "<<<", ">>>",
// "::"), with comments, string and character literals and preprocessor
// lines recognised so that nothing inside them is taken for code.
type token struct {
	text       string
	start, end int // byte offsets in the source
	line       int // 1-based line of start
	kind       tokKind
	directive  bool // inside a preprocessor line
}

type tokKind uint8

const (
	tokIdent tokKind = iota
	tokNumber
	tokPunct
	tokString // string or character literal
)

func isIdent(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (!first && c >= '0' && c <= '9')
}

// lex splits src into tokens. Malformed input (an unterminated comment or
// literal) ends the token stream there; it never fails.
func lex(src []byte) []token {
	// Tokens' texts are slices of one copy of src, and the slice is sized
	// for a token per ~3 bytes up front: a string per token and the
	// slice's growth were most of the loop finder's cost when a run maps
	// its lanes' call contexts (put.cpp against the MORI-shaped header:
	// 9% of a run's CPU; BenchmarkLoops: 4432 to 15 allocations).
	text := string(src)
	out := make([]token, 0, len(src)/3+1)
	line := 1
	bol := true // at the beginning of a line (only spaces so far)
	inDirective := false
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '\n':
			line++
			if i == 0 || src[i-1] != '\\' && !(src[i-1] == '\r' && i > 1 && src[i-2] == '\\') {
				inDirective = false
			}
			bol = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\\':
			i++
			continue
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			j := i + 2
			for j+1 < n && !(src[j] == '*' && src[j+1] == '/') {
				if src[j] == '\n' {
					line++
				}
				j++
			}
			i = j + 2
			continue
		case c == '#' && bol:
			inDirective = true
			bol = false
			out = append(out, token{text: "#", start: i, end: i + 1, line: line, kind: tokPunct, directive: true})
			i++
			continue
		}
		bol = false
		start, l0 := i, line
		kind := tokPunct
		switch {
		case c == 'R' && i+1 < n && src[i+1] == '"':
			// raw string R"delim( ... )delim"
			j := i + 2
			for j < n && src[j] != '(' {
				j++
			}
			delim := ")" + string(src[i+2:min(j, n)]) + "\""
			j++
			for j < n && !(j+len(delim) <= n && string(src[j:j+len(delim)]) == delim) {
				if src[j] == '\n' {
					line++
				}
				j++
			}
			i = min(j+len(delim), n)
			kind = tokString
		case isIdent(c, true):
			for i < n && isIdent(src[i], false) {
				i++
			}
			kind = tokIdent
			if i < n && (src[i] == '"' || src[i] == '\'') && (string(src[start:i]) == "u8" || string(src[start:i]) == "u" || string(src[start:i]) == "U" || string(src[start:i]) == "L") {
				continue // a prefix: the literal follows as its own token
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			for i < n && (isIdent(src[i], false) || src[i] == '.' || src[i] == '\'' ||
				(src[i] == '+' || src[i] == '-') && (src[i-1] == 'e' || src[i-1] == 'E' || src[i-1] == 'p' || src[i-1] == 'P')) {
				i++
			}
			kind = tokNumber
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = min(j+1, n)
			kind = tokString
		case (c == '<' || c == '>') && i+2 < n && src[i+1] == c && src[i+2] == c:
			i += 3
		case c == ':' && i+1 < n && src[i+1] == ':':
			i += 2
		default:
			i++
		}
		out = append(out, token{text: text[start:i], start: start, end: i, line: l0, kind: kind, directive: inDirective})
	}
	return out
}

// Span is a range of source lines, both ends included.
type Span struct{ Start, End int }

// Loops returns the line spans of the for, while and do loops of a C++
// source, in source order (outer loops first). A loop's span runs from its
// keyword to the end of its body (the closing brace, or the statement's
// semicolon; for do, the semicolon after its while).
func Loops(src []byte) []Span {
	toks := lex(src)
	var out []Span
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokIdent || t.directive {
			continue
		}
		switch t.text {
		case "for", "while":
			if t.text == "while" && i > 0 && toks[i-1].text == "}" && isDoTail(toks, i) {
				continue // the tail of a do loop, counted at its do
			}
			j := skipParens(toks, i+1)
			end := bodyEnd(toks, j)
			if end >= 0 {
				out = append(out, Span{t.line, toks[end].line})
			}
		case "do":
			end := bodyEnd(toks, i+1)
			if end < 0 {
				continue
			}
			// while ( ... ) ;
			k := end + 1
			if k < len(toks) && toks[k].text == "while" {
				k = skipParens(toks, k+1)
				if k < len(toks) && toks[k].text == ";" {
					end = k
				}
			}
			out = append(out, Span{t.line, toks[end].line})
		}
	}
	return out
}

// isDoTail: toks[i] is "while" right after a "}" that closes a do's body.
func isDoTail(toks []token, i int) bool {
	depth := 0
	for k := i - 1; k >= 0; k-- {
		switch toks[k].text {
		case "}":
			depth++
		case "{":
			depth--
			if depth == 0 {
				return k > 0 && toks[k-1].text == "do"
			}
		}
	}
	return false
}

// skipParens returns the index after the parenthesised group at i (or i
// when there is none, the end when it does not close).
func skipParens(toks []token, i int) int {
	if i >= len(toks) || toks[i].text != "(" {
		return i
	}
	if e := matchParen(toks, i); e >= 0 {
		return e + 1
	}
	return len(toks)
}

// matchParen returns the index of the ")" matching the "(" at toks[i], or
// -1 when it does not close.
func matchParen(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// bodyEnd returns the index of the last token of the statement at i: the
// matching brace of a block, or the semicolon ending a simple statement
// (a nested loop or if is followed through its own body). -1 if none.
func bodyEnd(toks []token, i int) int {
	if i >= len(toks) {
		return -1
	}
	switch toks[i].text {
	case "{":
		depth := 0
		for k := i; k < len(toks); k++ {
			switch toks[k].text {
			case "{":
				depth++
			case "}":
				depth--
				if depth == 0 {
					return k
				}
			}
		}
		return -1
	case "for", "while", "if", "switch":
		e := bodyEnd(toks, skipParens(toks, i+1))
		if toks[i].text == "if" && e >= 0 && e+1 < len(toks) && toks[e+1].text == "else" {
			return bodyEnd(toks, e+2)
		}
		return e
	case "do":
		e := bodyEnd(toks, i+1)
		if e < 0 {
			return -1
		}
		k := skipParens(toks, e+2)
		if k < len(toks) && toks[k].text == ";" {
			return k
		}
		return e
	}
	depth := 0
	for k := i; k < len(toks); k++ {
		switch toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth < 0 {
				return k - 1
			}
		case ";":
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

var loopCache struct {
	sync.Mutex
	m map[string][]Span
}

// LoopsAt returns the spans (as [start, end] pairs, outermost first) of
// the loops of file that enclose line. A file that cannot be read has no
// known loops: its lanes are then ordered by line alone.
func LoopsAt(file string, line int) [][2]int {
	loopCache.Lock()
	ls, ok := loopCache.m[file]
	if !ok {
		if src, err := os.ReadFile(file); err == nil {
			ls = Loops(src)
		}
		if loopCache.m == nil {
			loopCache.m = map[string][]Span{}
		}
		loopCache.m[file] = ls
	}
	loopCache.Unlock()
	var out [][2]int
	for _, l := range ls {
		if l.Start <= line && line <= l.End {
			out = append(out, [2]int{l.Start, l.End})
		}
	}
	return out
}
