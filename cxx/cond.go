package cxx

import (
	"slices"
	"strconv"
	"strings"
)

// The preprocessor conditionals of a source, as the rewriter honours them
// before any preprocessor has run: a branch whose condition is known
// false (`#if 0`, `#elif false`, an `#else` or `#elif` after a branch
// known true, anything inside such a branch) is dead and never rewritten
// nor checked, as the compiler never sees it; the branches of a condition
// emud cannot know (`#ifdef X`, `#if N > 2`) are each rewritten, and a
// launch's scan that runs out of one branch continues after the group's
// #endif, not into the next branch (the text one preprocessed file would
// hold).

// condKind is what a conditional directive line does.
type condKind uint8

const (
	condOpen   condKind = iota + 1 // #if, #ifdef, #ifndef
	condBranch                     // #elif, #elifdef, #elifndef, #else
	condEnd                        // #endif
)

// condLine is one conditional directive line: its "#" token's index.
type condLine struct {
	kind   condKind
	after  int  // the index of the first token after the line
	group  int  // index into conds.groups
	branch int  // the branch it starts (condOpen, condBranch)
	dead   bool // the branch it starts is never compiled
}

type condGroup struct {
	starts []int // the "#" index of each branch's directive
	end    int   // the "#" index of #endif, or len(toks) when missing
}

type conds struct {
	n      int
	lines  map[int]*condLine // by "#" token index
	groups []condGroup
}

// known is the value of a condition emud can tell without running the
// preprocessor: integer literals, true and false, and the macros emud
// never defines (neverDefined: 0, and not defined), joined by !, &&,
// ||, ==, !=, <, >, <=, >= and parentheses. Any other name is unknown,
// and so is the condition, unless && or || decide it without that name
// (`#if __CUDA_ARCH__ >= 900 && X` is false whatever X is).
func known(toks []token, i, end int) (val, ok bool) {
	p := condParser{toks: toks, i: i, end: end}
	v := p.or()
	if p.bad || p.i != end || !v.ok {
		return false, false
	}
	return v.v != 0, true
}

// neverDefined are the macros of a device compilation pass, which emud
// never defines (it compiles a source once, as host code): code under
// #if __CUDA_ARCH__ >= 700 is dead to the compiler, and so to the
// rewriter (its PTX is not checked either). Partial: a -D of one of them
// on the command line is not seen here.
var neverDefined = map[string]bool{"__CUDA_ARCH__": true, "__HIP_DEVICE_COMPILE__": true}

// definedKnown is the value of #ifdef NAME (or, negated, #ifndef) where
// emud knows it.
func definedKnown(toks []token, i, end int, negate bool) (val, ok bool) {
	if end-i != 1 || !neverDefined[toks[i].text] {
		return false, false
	}
	return negate, true
}

// condVal is a condition's value where known (ok).
type condVal struct {
	v  int64
	ok bool
}

func truth(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// condParser evaluates an #if expression's tokens toks[i:end].
type condParser struct {
	toks   []token
	i, end int
	bad    bool // something it does not evaluate (arithmetic, a call)
}

// peek is the next operator: two adjacent punctuation tokens that spell
// one (&&, ||, ==, !=, <=, >=) count as one; n is how many tokens.
func (p *condParser) peek() (op string, n int) {
	if p.i >= p.end {
		return "", 0
	}
	t := p.toks[p.i]
	if t.kind != tokPunct {
		return "", 0
	}
	if p.i+1 < p.end {
		u := p.toks[p.i+1]
		if u.kind == tokPunct && u.start == t.end {
			switch two := t.text + u.text; two {
			case "&&", "||", "==", "!=", "<=", ">=":
				return two, 2
			}
		}
	}
	return t.text, 1
}

func (p *condParser) binary(ops []string, next func() condVal, apply func(op string, a, b condVal) condVal) condVal {
	a := next()
	for !p.bad {
		op, n := p.peek()
		if !slices.Contains(ops, op) {
			break
		}
		p.i += n
		a = apply(op, a, next())
	}
	return a
}

func (p *condParser) or() condVal {
	return p.binary([]string{"||"}, p.and, func(_ string, a, b condVal) condVal {
		switch {
		case a.ok && a.v != 0, b.ok && b.v != 0:
			return condVal{1, true}
		case a.ok && b.ok:
			return condVal{0, true}
		}
		return condVal{}
	})
}

func (p *condParser) and() condVal {
	return p.binary([]string{"&&"}, p.cmp, func(_ string, a, b condVal) condVal {
		switch {
		case a.ok && a.v == 0, b.ok && b.v == 0:
			return condVal{0, true}
		case a.ok && b.ok:
			return condVal{1, true}
		}
		return condVal{}
	})
}

func (p *condParser) cmp() condVal {
	return p.binary([]string{"==", "!=", "<", ">", "<=", ">="}, p.unary, func(op string, a, b condVal) condVal {
		if !a.ok || !b.ok {
			return condVal{}
		}
		var r bool
		switch op {
		case "==":
			r = a.v == b.v
		case "!=":
			r = a.v != b.v
		case "<":
			r = a.v < b.v
		case ">":
			r = a.v > b.v
		case "<=":
			r = a.v <= b.v
		case ">=":
			r = a.v >= b.v
		}
		return condVal{truth(r), true}
	})
}

func (p *condParser) unary() condVal {
	if op, n := p.peek(); op == "!" {
		p.i += n
		v := p.unary()
		return condVal{truth(v.v == 0), v.ok}
	}
	return p.primary()
}

func (p *condParser) primary() condVal {
	if p.i >= p.end {
		p.bad = true
		return condVal{}
	}
	t := p.toks[p.i]
	switch {
	case t.text == "(":
		p.i++
		v := p.or()
		if op, _ := p.peek(); op != ")" {
			p.bad = true
			return condVal{}
		}
		p.i++
		return v
	case t.kind == tokNumber:
		p.i++
		n, err := strconv.ParseInt(strings.TrimRight(t.text, "uUlL"), 0, 64)
		if err != nil {
			p.bad = true
		}
		return condVal{n, err == nil}
	case t.kind == tokIdent && t.text == "defined":
		p.i++
		paren := false
		if op, _ := p.peek(); op == "(" {
			paren = true
			p.i++
		}
		if p.i >= p.end || p.toks[p.i].kind != tokIdent {
			p.bad = true
			return condVal{}
		}
		name := p.toks[p.i].text
		p.i++
		if paren {
			if op, _ := p.peek(); op != ")" {
				p.bad = true
				return condVal{}
			}
			p.i++
		}
		if neverDefined[name] {
			return condVal{0, true}
		}
		return condVal{}
	case t.kind == tokIdent:
		p.i++
		if op, _ := p.peek(); op == "(" { // a function-like macro's call
			p.bad = true
			return condVal{}
		}
		switch {
		case t.text == "true":
			return condVal{1, true}
		case t.text == "false":
			return condVal{0, true}
		case neverDefined[t.text]:
			return condVal{0, true}
		}
		return condVal{}
	}
	p.bad = true
	return condVal{}
}

// scanConds finds the conditional directives of toks. Unbalanced ones
// (an #endif with no #if, an #if with no #endif) are the compiler's to
// report: an unmatched #endif is ignored, an unclosed group runs to the
// end.
func scanConds(toks []token) *conds {
	c := &conds{n: len(toks), lines: map[int]*condLine{}}
	type open struct {
		group    int
		taken    bool // a branch known true came already
		deadFrom bool // the enclosing branch is dead
	}
	var stack []open
	parentDead := func() bool { return len(stack) > 0 && stack[len(stack)-1].deadFrom }
	for i := 0; i < len(toks); i++ {
		if toks[i].text != "#" || !toks[i].directive {
			continue
		}
		if i > 0 && toks[i-1].line == toks[i].line {
			continue // a # inside a directive (stringizing), not a line's
		}
		after := i + 1
		for after < len(toks) && toks[after].directive && !(toks[after].text == "#" && toks[after].line > toks[after-1].line) {
			after++
		}
		if i+1 >= after || toks[i+1].kind != tokIdent {
			continue
		}
		var val, ok bool
		switch d := toks[i+1].text; d {
		case "if", "elif":
			val, ok = known(toks, i+2, after)
		case "ifdef", "elifdef", "ifndef", "elifndef":
			val, ok = definedKnown(toks, i+2, after, d == "ifndef" || d == "elifndef")
		}
		switch toks[i+1].text {
		case "if", "ifdef", "ifndef":
			g := len(c.groups)
			c.groups = append(c.groups, condGroup{starts: []int{i}, end: len(toks)})
			dead := parentDead() || ok && !val
			c.lines[i] = &condLine{kind: condOpen, after: after, group: g, dead: dead}
			stack = append(stack, open{group: g, taken: ok && val, deadFrom: dead})
		case "elif", "elifdef", "elifndef", "else":
			if len(stack) == 0 {
				continue
			}
			top := &stack[len(stack)-1]
			if toks[i+1].text == "else" {
				val, ok = true, true
			}
			outer := len(stack) > 1 && stack[len(stack)-2].deadFrom
			dead := outer || top.taken || ok && !val
			g := &c.groups[top.group]
			c.lines[i] = &condLine{kind: condBranch, after: after, group: top.group, branch: len(g.starts), dead: dead}
			g.starts = append(g.starts, i)
			top.taken = top.taken || ok && val
			top.deadFrom = dead
		case "endif":
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.groups[top.group].end = i
			c.lines[i] = &condLine{kind: condEnd, after: after, group: top.group}
		}
	}
	return c
}

// enter is the first token of the first live branch of group g from
// branch b on (past the whole group when none is live).
func (c *conds) enter(g, b int) int {
	gr := c.groups[g]
	for ; b < len(gr.starts); b++ {
		if l := c.lines[gr.starts[b]]; !l.dead {
			return l.after
		}
	}
	return c.pastEnd(g)
}

func (c *conds) pastEnd(g int) int {
	e := c.groups[g].end
	if l := c.lines[e]; l != nil {
		return l.after
	}
	return c.n
}

// settle moves k off conditional directive lines onto the next token a
// path reaches. all: every live branch is visited in turn (the rewriter's
// walk); otherwise a branch's end leads past its group's #endif (a
// launch's scan).
func (c *conds) settle(k int, all bool) int {
	for k < c.n {
		l := c.lines[k]
		if l == nil {
			return k
		}
		switch {
		case l.kind == condOpen:
			k = c.enter(l.group, 0)
		case l.kind == condBranch && all:
			k = c.enter(l.group, l.branch)
		case l.kind == condBranch:
			k = c.pastEnd(l.group)
		default: // #endif
			k = l.after
		}
	}
	return c.n
}

// next is the token after j on a launch's path.
func (c *conds) next(j int) int { return c.settle(j+1, false) }

// isCond says toks[k] starts a conditional directive line.
func (c *conds) isCond(k int) bool { return c.lines[k] != nil }

// matchParen is the index of the ")" closing the "(" at open along a
// launch's path, or -1.
func (c *conds) matchParen(toks []token, open int) int {
	depth := 0
	for k := open; k < len(toks); k = c.next(k) {
		switch toks[k].text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}
