package kernel

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// maxDepth bounds the physical frames read at a convergence point. A lane
// deeper than this (deep recursion in kernel code) keeps its innermost
// maxDepth frames; its outer frames are then unknown, which the package doc
// lists as a limit.
const maxDepth = 64

// frame is one logical frame of a parked lane: inlined calls are expanded,
// so a frame is the same under any inlining or optimisation flags.
type frame struct {
	fn    string // runtime function name
	file  string
	line  int
	loops []*loop // loops of fn that enclose line, outermost first
	// pc is a native frame's return address (NewNativeContext), 0 for Go
	// frames. It never orders or groups lanes (the compiler may duplicate
	// one call of the source, as -O2 does); it only tells a second call on
	// one line from a loop's back edge (moved).
	pc uint64
}

func (f *frame) samePos(g *frame) bool {
	return f.line == g.line && f.fn == g.fn && f.file == g.file
}

// loop is one for/range statement of a source file.
type loop struct {
	start, end int // lines; a loop is identified by its *loop
}

// site is a convergence point in program terms: the logical frames from
// the kernel function (outermost) to the park (innermost). Sites are
// interned by their physical return addresses, so lanes at one point share
// one *site and equality is a pointer comparison.
type site struct {
	frames []frame
	nloops int   // loops over all frames
	base   []int // base[i]: index of frame i's first loop in a lane's iteration vector
	show   string
}

// siteCache interns sites process-wide: return addresses are fixed for the
// life of the process, and the interned value depends only on the source.
var siteCache struct {
	sync.RWMutex
	m map[string]*site
}

// lookupSite returns the site of a chain of return addresses (innermost
// first), resolving and interning it on first sight.
func lookupSite(pcs []uintptr) *site {
	key := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(pcs))), len(pcs)*int(unsafe.Sizeof(uintptr(0))))
	siteCache.RLock()
	s := siteCache.m[key]
	siteCache.RUnlock()
	if s != nil {
		return s
	}
	s = resolveSite(pcs)
	siteCache.Lock()
	if siteCache.m == nil {
		siteCache.m = map[string]*site{}
	}
	if old := siteCache.m[key]; old != nil {
		s = old
	} else {
		siteCache.m[strings.Clone(key)] = s
	}
	siteCache.Unlock()
	return s
}

// The frames above the kernel function belong to the launcher.
const (
	rootFn = "github.com/emud-dev/emud/kernel.(*Thread).run"
	parkFn = "github.com/emud-dev/emud/kernel.(*Thread).park"
	siteFn = "github.com/emud-dev/emud/kernel.callSite"
)

func resolveSite(pcs []uintptr) *site {
	var fs []frame
	it := runtime.CallersFrames(pcs)
	for {
		f, more := it.Next()
		if f.Function == rootFn {
			break
		}
		// park and callSite are the mechanism, inlined or not by flags.
		if f.Function != "" && !(len(fs) == 0 && (f.Function == parkFn || f.Function == siteFn)) {
			fs = append(fs, frame{fn: f.Function, file: f.File, line: f.Line})
		}
		if !more {
			break
		}
	}
	// Outermost first.
	for i, j := 0, len(fs)-1; i < j; i, j = i+1, j-1 {
		fs[i], fs[j] = fs[j], fs[i]
	}
	s := &site{frames: fs, base: make([]int, len(fs))}
	for i := range fs {
		fs[i].loops = sources.loopsAt(fs[i].file, fs[i].line)
		s.base[i] = s.nloops
		s.nloops += len(fs[i].loops)
	}
	s.show = s.describe()
	return s
}

// apiPkgs hold device-call implementations: a hang report shows the
// innermost frame outside them, the user's call.
var apiPkgs = []string{
	"github.com/emud-dev/emud/kernel.",
	"github.com/emud-dev/emud/cco.",
	"github.com/emud-dev/emud/fabric.",
}

func isAPIFrame(f *frame) bool {
	if strings.HasSuffix(f.file, "_test.go") {
		return false
	}
	for _, p := range apiPkgs {
		if strings.HasPrefix(f.fn, p) {
			return true
		}
	}
	return false
}

// describe is the site's source position for people: file:line of the
// innermost frame that is not device-call code, or of the kernel function
// when the whole kernel lives in a device-call package.
func (s *site) describe() string {
	if len(s.frames) == 0 {
		return "?"
	}
	f := &s.frames[0]
	for i := len(s.frames) - 1; i >= 0; i-- {
		if !isAPIFrame(&s.frames[i]) {
			f = &s.frames[i]
			break
		}
	}
	return fmt.Sprintf("%s:%d", filepath.Base(f.file), f.line)
}

// ---- loops from the syntax tree ----

// sources caches, per file, the loop statements of each function, read
// from the file's syntax tree. A file that cannot be read or parsed has no
// known loops: its lanes are ordered by line alone.
var sources = &srcCache{files: map[string]*srcFile{}}

type srcCache struct {
	mu    sync.Mutex
	files map[string]*srcFile
}

type span struct{ start, end int }

type srcFile struct {
	funcs []span // function declarations and literals
	loops []*loop
}

func (c *srcCache) loopsAt(file string, line int) []*loop {
	c.mu.Lock()
	f, ok := c.files[file]
	if !ok {
		f = parseSource(file)
		c.files[file] = f
	}
	c.mu.Unlock()
	if f == nil {
		return nil
	}
	// The innermost function holding line: loops outside it belong to an
	// enclosing function (a kernel literal written inside a test's loop).
	fn := span{0, 1 << 30}
	for _, s := range f.funcs {
		if funcHolds(s, line) && s.start >= fn.start && s.end <= fn.end {
			fn = s
		}
	}
	var ls []*loop
	for _, l := range f.loops { // in source order: outer loops first
		if l.start <= line && line <= l.end && l.start >= fn.start && l.end <= fn.end {
			ls = append(ls, l)
		}
	}
	return ls
}

// funcHolds: the line a multi-line function literal starts on is the
// caller's (`Launch(cfg, func(t *Thread) {`); a one-line literal holds its
// line.
func funcHolds(s span, line int) bool {
	if s.start == s.end {
		return line == s.start
	}
	return s.start < line && line <= s.end
}

func parseSource(file string) *srcFile {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	out := &srcFile{}
	ast.Inspect(af, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				out.funcs = append(out.funcs, span{fset.Position(n.Pos()).Line, fset.Position(n.End()).Line})
			}
		case *ast.FuncLit:
			out.funcs = append(out.funcs, span{fset.Position(n.Pos()).Line, fset.Position(n.End()).Line})
		case *ast.ForStmt, *ast.RangeStmt:
			out.loops = append(out.loops, &loop{start: fset.Position(n.Pos()).Line, end: fset.Position(n.End()).Line})
		}
		return true
	})
	return out
}

// ---- program order ----

// enter moves lane t's position to s, updating its loop iteration counts:
// a lane that parks at or before its previous point in a function went
// round the innermost loop holding both points (or, when none does, a loop
// of a caller that called the function again).
func (t *Thread) enter(s *site) {
	prev, old := t.site, t.iters
	n := s.nloops
	if cap(t.spare) < n {
		t.spare = make([]uint32, n)
	}
	it := t.spare[:n]
	clear(it)
	t.site, t.spare, t.iters = s, old[:0], it
	if prev == nil {
		return
	}
	moved(prev, old, s, it)
}

// again is enter for the point the lane parked at last: the innermost loop
// holding it went round once more (the back edge enter would find).
func (t *Thread) again() {
	if n := t.site.nloops; n > 0 {
		t.iters[n-1]++
	}
}

// moved computes the iteration counts it at s from those, old, at prev.
func moved(prev *site, old []uint32, s *site, it []uint32) {
	m := min(len(prev.frames), len(s.frames))
	d := 0
	for d < m && prev.frames[d].samePos(&s.frames[d]) {
		copy(it[s.base[d]:], old[prev.base[d]:prev.base[d]+len(s.frames[d].loops)])
		d++
	}
	if d == m {
		// The same point again (or a prefix): a back edge at the innermost
		// shared frame.
		if d == 0 {
			return
		}
		if e, ok := otherCall(prev, s, m); ok {
			// Native frames at the same lines, through another call: in
			// the outermost frame whose call differs, a loop of that frame
			// went round (or, with none there, it is that line's next call).
			if c := len(s.frames[e].loops); c > 0 {
				backEdge(s, it, e, c)
			}
			return
		}
		d--
		backEdge(s, it, d, len(s.frames[d].loops))
		return
	}
	pf, nf := &prev.frames[d], &s.frames[d]
	if pf.fn != nf.fn || pf.file != nf.file {
		return // another function called from one site (a func value): fresh
	}
	c := commonLoops(pf, nf)
	copy(it[s.base[d]:s.base[d]+c], old[prev.base[d]:prev.base[d]+c])
	if nf.line > pf.line {
		return // forward within the same iterations
	}
	backEdge(s, it, d, c)
}

// otherCall finds the outermost of the first m frames of native sites a
// and b (at the same lines) whose calls differ by return address: two calls
// on one line (MORI's waveBcastLane makes two on one line), or one call of
// the source the compiler duplicated (a loop's peeled first iteration).
func otherCall(a, b *site, m int) (int, bool) {
	for e := 0; e < m; e++ {
		if a.frames[e].pc != b.frames[e].pc {
			return e, true
		}
	}
	return 0, false
}

// commonLoops is how many outer loops two frames of one function share.
func commonLoops(f, g *frame) int {
	c := 0
	for c < len(f.loops) && c < len(g.loops) && f.loops[c] == g.loops[c] {
		c++
	}
	return c
}

// backEdge counts one more iteration of the innermost of the first c loops
// of frame d, or of a caller's loop when frame d has none in common.
func backEdge(s *site, it []uint32, d, c int) {
	for {
		if c > 0 {
			it[s.base[d]+c-1]++
			return
		}
		d--
		if d < 0 {
			return
		}
		c = len(s.frames[d].loops)
	}
}

// before reports whether lane t's point comes first in program order:
// compare frames from the outermost; in frames at one point, the lower
// iteration of an enclosing loop first; at the first frame that differs,
// the lower iteration of a loop holding both points, then the lower line.
func (t *Thread) before(u *Thread) bool {
	a, b := t.site, u.site
	if a != b {
		m := min(len(a.frames), len(b.frames))
		for d := 0; d < m; d++ {
			fa, fb := &a.frames[d], &b.frames[d]
			if fa.samePos(fb) {
				if r := cmpIters(t.iters[a.base[d]:a.base[d]+len(fa.loops)], u.iters[b.base[d]:b.base[d]+len(fb.loops)]); r != 0 {
					return r < 0
				}
				continue
			}
			if fa.fn != fb.fn || fa.file != fb.file {
				if fa.fn != fb.fn {
					return fa.fn < fb.fn
				}
				return fa.file < fb.file
			}
			c := commonLoops(fa, fb)
			if r := cmpIters(t.iters[a.base[d]:a.base[d]+c], u.iters[b.base[d]:b.base[d]+c]); r != 0 {
				return r < 0
			}
			return fa.line < fb.line
		}
		if len(a.frames) != len(b.frames) {
			return len(a.frames) < len(b.frames)
		}
	} else if r := cmpIters(t.iters, u.iters); r != 0 {
		return r < 0
	}
	return t.lane < u.lane
}

func cmpIters(x, y []uint32) int {
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
