package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pkgInfo is what one package declares: its exported names and, per type,
// its methods and fields, with the types it embeds or aliases to follow.
type pkgInfo struct {
	dir     string
	names   map[string]bool
	members map[string]map[string]bool // type → method/field names
	follow  map[string][]string        // type → "pkg.T" or "T" it embeds or aliases
}

var (
	// qualified matches pkg.Ident[.Member] for this module's package names.
	qualified = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
	// link matches a doc link [Ident] or [Ident.Member] (Go doc syntax);
	// an index after a name (mem64[Addr]) is not one.
	link = regexp.MustCompile(`(?:^|[^A-Za-z0-9_\]])\[([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?\]`)
)

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	require.NoError(t, err, "the module root is two levels up")
	return dir
}

// load parses every package of the module (non-test files, every build
// tag) by its package name; two packages of one name (main) are skipped.
func load(t *testing.T, mod string) map[string]*pkgInfo {
	t.Helper()
	pkgs := map[string]*pkgInfo{}
	dup := map[string]bool{}
	err := filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		var p *pkgInfo
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			name := af.Name.Name
			if p == nil {
				if pkgs[name] != nil && pkgs[name].dir != path {
					dup[name] = true
				}
				p = &pkgInfo{dir: path, names: map[string]bool{}, members: map[string]map[string]bool{}, follow: map[string][]string{}}
				pkgs[name] = p
			}
			p.add(af)
		}
		return nil
	})
	require.NoError(t, err)
	for name := range dup {
		delete(pkgs, name)
	}
	delete(pkgs, "main")
	return pkgs
}

func (p *pkgInfo) member(typ, m string) {
	if p.members[typ] == nil {
		p.members[typ] = map[string]bool{}
	}
	p.members[typ][m] = true
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
	case *ast.IndexExpr: // generic instantiation
		return typeName(x.X)
	case *ast.IndexListExpr:
		return typeName(x.X)
	}
	return ""
}

func (p *pkgInfo) add(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.names[d.Name.Name] = true
				continue
			}
			p.member(typeName(d.Recv.List[0].Type), d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.names[n.Name] = true
					}
				case *ast.TypeSpec:
					name := s.Name.Name
					p.names[name] = true
					if s.Assign.IsValid() { // an alias: its members are the target's
						p.follow[name] = append(p.follow[name], typeName(s.Type))
					}
					switch ty := s.Type.(type) {
					case *ast.StructType:
						for _, fl := range ty.Fields.List {
							if len(fl.Names) == 0 {
								emb := typeName(fl.Type)
								p.follow[name] = append(p.follow[name], emb)
								p.member(name, emb[strings.LastIndex(emb, ".")+1:])
							}
							for _, n := range fl.Names {
								p.member(name, n.Name)
							}
						}
					case *ast.InterfaceType:
						for _, m := range ty.Methods.List {
							for _, n := range m.Names {
								p.member(name, n.Name)
							}
							if len(m.Names) == 0 {
								p.follow[name] = append(p.follow[name], typeName(m.Type))
							}
						}
					}
				}
			}
		}
	}
}

// has reports whether pkg declares name, or name.member when member is
// set, following embedded and aliased types (across packages).
func has(pkgs map[string]*pkgInfo, pkg, name, member string, depth int) bool {
	p := pkgs[pkg]
	if p == nil || !p.names[name] || depth > 8 {
		return false
	}
	if member == "" || p.members[name][member] {
		return true
	}
	for _, f := range p.follow[name] {
		fp, fn := pkg, f
		if i := strings.Index(f, "."); i >= 0 {
			fp, fn = f[:i], f[i+1:]
		}
		if has(pkgs, fp, fn, member, depth+1) {
			return true
		}
	}
	return false
}

// TestDocsNameRealIdentifiers checks the comments of every non-test Go
// file of the module.
func TestDocsNameRealIdentifiers(t *testing.T) {
	mod := root(t)
	pkgs := load(t, mod)
	for _, want := range []string{"engine", "issuer", "cco", "sim", "model", "ring"} {
		require.Contains(t, pkgs, want, "the loader found the module's packages")
	}
	checked := 0
	var bad []string
	for self, p := range pkgs {
		files, _ := filepath.Glob(filepath.Join(p.dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			doc, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			rel, _ := filepath.Rel(mod, f)
			text := comments(string(doc))
			for _, m := range qualified.FindAllStringSubmatch(text, -1) {
				if pkgs[m[1]] == nil {
					continue // not one of ours (fmt.Errorf, a file name)
				}
				checked++
				// sim.Run is shorthand for sim.Sim.Run (the package's own type).
				own := strings.ToUpper(m[1][:1]) + m[1][1:]
				if !has(pkgs, m[1], m[2], m[3], 0) && (m[3] != "" || !has(pkgs, m[1], own, m[2], 0)) {
					bad = append(bad, rel+": "+m[0])
				}
			}
			for _, m := range link.FindAllStringSubmatch(text, -1) {
				if strings.ToUpper(m[1]) == m[1] {
					continue // [COPY][ATOMIC]: a ring layout, not a link
				}
				checked++
				if !has(pkgs, self, m[1], m[2], 0) {
					bad = append(bad, rel+": "+m[0])
				}
			}
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad, "comments name identifiers that do not exist")
	assert.Greater(t, checked, 50, "the docs' identifiers were found and checked")
}

// comments returns the comment text of a Go file.
func comments(src string) string {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "//"); ok {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// The checker itself: a name that exists passes, one that does not fails.
func TestHas(t *testing.T) {
	pkgs := load(t, root(t))
	for _, tc := range []struct {
		pkg, name, member string
		want              bool
	}{
		{"engine", "Node", "NewQueue", true},
		{"engine", "Queue", "Reserve", true}, // embedded issuer.Queue
		{"engine", "Observer", "Retired", true},
		{"model", "Model", "Cost", true},
		{"engine", "CopyTime", "", false},
		{"model", "UncontendedCopyTime", "", false},
		{"engine", "Node", "NoSuchMethod", false},
		{"sim", "Sim", "Run", true},
		{"sim", "Sim", "Run", true},
	} {
		assert.Equal(t, tc.want, has(pkgs, tc.pkg, tc.name, tc.member, 0), "%s.%s.%s", tc.pkg, tc.name, tc.member)
	}
}
