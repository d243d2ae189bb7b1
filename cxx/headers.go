package cxx

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The user's headers: a launch (<<<...>>>), a __shared__ declaration, a
// kernel cast to a void pointer or (CUDA) inline PTX in a header the
// program includes from its own directories needs the same rewrite as in
// a source (a launch helper templated over the kernel is often in one).
// The driver rewrites each source alone, so before it compiles one, the
// headers are found (shadowHeaders): the source's #include directives
// are followed, textually, through the files they name in the source's
// directory, the -iquote and -I directories the user gave; a header
// Rewrite would change is written rewritten under a shadow root (at its
// own absolute path below it), and so is every header that includes one
// of those, with the directive pointing at the copy. Each copy starts
// with a #line naming the original, so messages, __FILE__ and lanes'
// sites name the user's file, and its quote includes that name a file
// beside the original are made absolute (the copy's own directory holds
// only copies). A source whose headers need nothing compiles as before.
// Partial: directives are followed whatever the conditionals around them
// say (a header rewritten but never included changes nothing), computed
// includes (#include MACRO) and #include_next are not followed, and a
// header reached only through a header of a system directory is not
// rewritten.

// includeLine matches an #include directive: the delimiter and the name.
var includeLine = regexp.MustCompile(`^[ \t]*#[ \t]*include[ \t]*([<"])([^">\n]+)[">]`)

// searchPath are the directories a directive is searched in, in the
// compiler's order: quote-only ones (-iquote, after the includer's own
// directory), then those of both forms (-I, emud's include/ first);
// under a stop directory a header is emud's own and not followed.
type searchPath struct {
	quote, both []string
	stop        []string
}

// userSearchPath is the search order of a compile: emud's include
// directory (and the user's MORI's, when in use: stop directories too),
// the source's directory as -iquote, then the user's -iquote and -I.
func userSearchPath(root, srcDir string, flags []string) searchPath {
	d := searchPath{stop: []string{filepath.Join(root, "include")}, both: []string{filepath.Join(root, "include")}}
	if h := MoriHeader(flags); h != "" {
		d.stop = append(d.stop, filepath.Dir(filepath.Dir(h))) // the user's mori/: emud compiles against it its own way (mori.go)
	}
	d.quote = append(d.quote, srcDir)
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		for _, opt := range []string{"-iquote", "-I"} {
			if !strings.HasPrefix(f, opt) {
				continue
			}
			v := strings.TrimPrefix(f, opt)
			if v == "" && i+1 < len(flags) {
				i++
				v = flags[i]
			}
			if v == "" {
				continue
			}
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
			if opt == "-iquote" {
				d.quote = append(d.quote, v)
			} else {
				d.both = append(d.both, v)
			}
			break
		}
	}
	return d
}

type includeRef struct {
	line   int    // the directive's line, from 0
	target string // the file it names, absolute
	beside bool   // found in the includer's own directory
}

// resolve finds the file a directive of from names, and whether it is
// the user's (not under a stop directory).
func (d searchPath) resolve(from, name string, quote bool) (path string, beside, user bool) {
	var dirs []string
	if quote {
		dirs = append([]string{filepath.Dir(from)}, d.quote...)
	}
	dirs = append(dirs, d.both...)
	if filepath.IsAbs(name) {
		dirs = []string{""}
	}
	for i, dir := range dirs {
		p := filepath.Clean(filepath.Join(dir, name))
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		for _, s := range d.stop {
			if p == s || strings.HasPrefix(p, s+string(filepath.Separator)) {
				return p, false, false
			}
		}
		return p, quote && i == 0 && !filepath.IsAbs(name), true
	}
	return "", false, false
}

// includes lists b's directives that name a file of the user's.
func (d searchPath) includes(from string, b []byte) []includeRef {
	var refs []includeRef
	for i, l := range bytes.Split(b, []byte("\n")) {
		m := includeLine.FindSubmatch(l)
		if m == nil {
			continue
		}
		p, beside, user := d.resolve(from, string(m[2]), string(m[1]) == `"`)
		if user {
			refs = append(refs, includeRef{line: i, target: p, beside: beside})
		}
	}
	return refs
}

// maxShadowHeaders bounds the headers followed from one source.
const maxShadowHeaders = 4096

// shadowHeaders returns src (the source at path, PTX already rewritten)
// with its directives pointing at rewritten copies of the headers that
// need one, written under shadow; src itself when none does.
func shadowHeaders(src []byte, path string, d searchPath, cuda bool, shadow string) ([]byte, error) {
	type file struct {
		text []byte // as read (PTX rewritten, for CUDA)
		refs []includeRef
		own  bool // Rewrite changes it
	}
	files := map[string]*file{}
	queue := []string{}
	srcRefs := d.includes(path, src)
	for _, r := range srcRefs {
		queue = append(queue, r.target)
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if files[p] != nil || p == path {
			continue
		}
		if len(files) >= maxShadowHeaders {
			return nil, fmt.Errorf("%s: more than %d headers of the program's own included: emud follows no more", path, maxShadowHeaders)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		f := &file{text: b}
		if cuda {
			if f.text, err = RewritePTX(b, p); err != nil {
				return nil, err
			}
		}
		rw, err := Rewrite(f.text, p)
		if err != nil {
			return nil, err
		}
		_, body, _ := bytes.Cut(rw, []byte("\n")) // past Rewrite's #line
		f.own = !bytes.Equal(body, b)
		f.refs = d.includes(p, f.text)
		files[p] = f
		for _, r := range f.refs {
			queue = append(queue, r.target)
		}
	}
	// A header is copied when it needs the rewrite or includes one copied.
	copied := map[string]bool{}
	for p, f := range files {
		if f.own {
			copied[p] = true
		}
	}
	if len(copied) == 0 {
		return src, nil
	}
	for grew := true; grew; {
		grew = false
		for p, f := range files {
			if copied[p] {
				continue
			}
			for _, r := range f.refs {
				if copied[r.target] {
					copied[p], grew = true, true
					break
				}
			}
		}
	}
	at := func(p string) string { return filepath.Join(shadow, p) }
	for p := range copied {
		if strings.ContainsAny(at(p), "\"\n") {
			return nil, fmt.Errorf("%s: a header's path holds a quote or a line break, which an #include cannot name", p)
		}
	}
	// point rewrites the directives of b that name a copied header to the
	// copy, and (in a copy) those that name a file beside the original to
	// its absolute path.
	point := func(b []byte, refs []includeRef, copy bool) []byte {
		lines := bytes.Split(b, []byte("\n"))
		for _, r := range refs {
			var to string
			switch {
			case copied[r.target]:
				to = at(r.target)
			case copy && r.beside:
				to = r.target
			default:
				continue
			}
			l := lines[r.line]
			m := includeLine.FindSubmatchIndex(l)
			if m == nil {
				continue
			}
			// From the opening delimiter to the line's closing one.
			closeAt := m[5]
			lines[r.line] = append(append(append([]byte{}, l[:m[2]]...), '"'), append([]byte(to+`"`), l[closeAt+1:]...)...)
		}
		return bytes.Join(lines, []byte("\n"))
	}
	for p := range copied {
		f := files[p]
		rw, err := Rewrite(point(f.text, f.refs, true), p)
		if err != nil {
			return nil, err
		}
		dst := at(p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, rw, 0o644); err != nil {
			return nil, err
		}
	}
	return point(src, srcRefs, false), nil
}
