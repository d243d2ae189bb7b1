package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envRead is one environment variable the code reads and where.
type envRead struct {
	name, where string
}

// goFile is one parsed Go file of the module.
type goFile struct {
	rel string
	f   *ast.File
}

// parseGo parses every Go file of the module, tests included (their
// variables, EMUD_TEST_RACE and the like, are documented too).
func parseGo(t *testing.T, mod string) []goFile {
	t.Helper()
	var out []goFile
	err := filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != mod {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mod, path)
		out = append(out, goFile{rel, f})
		return nil
	})
	require.NoError(t, err)
	return out
}

// stringConsts maps each package-level string constant of files to its
// value, by "pkg.Name" and by "Name" within its own package ("pkg/Name").
func stringConsts(files []goFile) map[string]string {
	out := map[string]string{}
	for _, gf := range files {
		for _, d := range gf.f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok || len(vs.Values) != len(vs.Names) {
					continue
				}
				for i, n := range vs.Names {
					if v, ok := stringLit(vs.Values[i]); ok {
						out[gf.f.Name.Name+"."+n.Name] = v
					}
				}
			}
		}
	}
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

// isEnvCall reports whether call is os.Getenv(x) or os.LookupEnv(x).
func isEnvCall(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv")
}

// goEnvReads finds the variables Go code reads with os.Getenv and
// os.LookupEnv: a literal name, a string constant (own package or
// qualified), each name of a `for _, k := range []string{...}` loop, or a
// parameter of a helper (envInt(name, def)), whose callers' literal names
// count. A name it cannot resolve is returned in unresolved, so a new way
// of reading the environment fails the test rather than going unseen.
func goEnvReads(files []goFile) (reads []envRead, unresolved []string) {
	consts := stringConsts(files)
	type helper struct{ pkg, name string }
	helpers := map[helper]int{} // helper → index of the parameter it reads
	for _, gf := range files {
		pkg := gf.f.Name.Name
		for _, d := range gf.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				// A package-level var read at start-up (raceEverywhere =
				// os.Getenv("EMUD_TEST_RACE")): a literal or a constant.
				fd = &ast.FuncDecl{Name: ast.NewIdent("var"), Type: &ast.FuncType{Params: &ast.FieldList{}}, Body: &ast.BlockStmt{List: []ast.Stmt{&ast.DeclStmt{Decl: d}}}}
			}
			if fd.Body == nil {
				continue
			}
			params := map[string]int{}
			i := 0
			for _, fl := range fd.Type.Params.List {
				for _, n := range fl.Names {
					params[n.Name] = i
					i++
				}
				if len(fl.Names) == 0 {
					i++
				}
			}
			ranged := map[string][]string{} // loop variable → the literals it takes
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				rs, ok := n.(*ast.RangeStmt)
				if !ok {
					return true
				}
				v, ok := rs.Value.(*ast.Ident)
				cl, ok2 := rs.X.(*ast.CompositeLit)
				if ok && ok2 {
					for _, e := range cl.Elts {
						if s, ok := stringLit(e); ok {
							ranged[v.Name] = append(ranged[v.Name], s)
						}
					}
				}
				return true
			})
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isEnvCall(call) {
					return true
				}
				where := gf.rel + ": " + fd.Name.Name
				switch a := call.Args[0].(type) {
				case *ast.BasicLit:
					if s, ok := stringLit(a); ok {
						reads = append(reads, envRead{s, where})
						return true
					}
				case *ast.Ident:
					if names, ok := ranged[a.Name]; ok {
						for _, s := range names {
							reads = append(reads, envRead{s, where})
						}
						return true
					}
					if i, ok := params[a.Name]; ok {
						helpers[helper{pkg, fd.Name.Name}] = i
						return true
					}
					if s, ok := consts[pkg+"."+a.Name]; ok {
						reads = append(reads, envRead{s, where})
						return true
					}
				case *ast.SelectorExpr:
					if x, ok := a.X.(*ast.Ident); ok {
						if s, ok := consts[x.Name+"."+a.Sel.Name]; ok {
							reads = append(reads, envRead{s, where})
							return true
						}
					}
				}
				unresolved = append(unresolved, fmt.Sprintf("%s: %T", where, call.Args[0]))
				return true
			})
		}
	}
	for _, gf := range files {
		ast.Inspect(gf.f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok {
				return true
			}
			i, ok := helpers[helper{gf.f.Name.Name, id.Name}]
			if !ok || i >= len(call.Args) {
				return true
			}
			if s, ok := stringLit(call.Args[i]); ok {
				reads = append(reads, envRead{s, gf.rel + ": " + id.Name})
			} else {
				unresolved = append(unresolved, gf.rel+": "+id.Name+" with a computed name")
			}
			return true
		})
	}
	return reads, unresolved
}

// cGetenv matches a C or C++ getenv of a literal name.
var cGetenv = regexp.MustCompile(`\bgetenv\("([A-Za-z_][A-Za-z0-9_]*)"\)`)

// cEnvReads finds the variables the C side (capi/) and emud's headers
// (include/) read with getenv and a literal name.
func cEnvReads(t *testing.T, mod string) []envRead {
	t.Helper()
	var out []envRead
	for _, dir := range []string{"capi", "include"} {
		err := filepath.WalkDir(filepath.Join(mod, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch filepath.Ext(path) {
			case ".c", ".h", ".hpp", ".cpp", ".cc":
			default:
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(mod, path)
			for _, m := range cGetenv.FindAllStringSubmatch(string(b), -1) {
				out = append(out, envRead{m[1], rel})
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// envRow matches a row of docs/env.md's table: its first cell is the
// variable in code; <WORD> in a name stands for any upper-case word
// (MORI_<MODULE>_LOG_LEVEL).
var envRow = regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_<>]*)` \\|")

// notDocumented are variables the code reads that are not emud's to
// document.
var notDocumented = map[string]string{
	"PATH":           "cmd/emud's farm test puts a fake sbatch first on it",
	"GLIBC_TUNABLES": "glibc's: capi/heap.c leaves malloc alone when it sets malloc tunables (docs/env.md's EMUD_MALLOC says so)",
}

// docEnv is one name of the table, as a pattern.
type docEnv struct {
	name string
	re   *regexp.Regexp
}

func envTable(t *testing.T, text string) []docEnv {
	t.Helper()
	var out []docEnv
	for _, m := range envRow.FindAllStringSubmatch(text, -1) {
		pat := regexp.MustCompile(`<[A-Z]+>`).ReplaceAllString(regexp.QuoteMeta(m[1]), `[A-Z0-9_]+`)
		out = append(out, docEnv{m[1], regexp.MustCompile("^" + pat + "$")})
	}
	return out
}

// TestEnvTableMatchesCode: docs/env.md's table names every environment
// variable the code reads (os.Getenv and os.LookupEnv in Go, tests
// included; getenv in capi/ and include/), and no variable the code does
// not read. A name with <WORD> in it (MORI_<MODULE>_LOG_LEVEL) stands for
// a name the code builds; its fixed tail must appear in the source.
func TestEnvTableMatchesCode(t *testing.T) {
	mod := root(t)
	files := parseGo(t, mod)
	goReads, unresolved := goEnvReads(files)
	assert.Empty(t, unresolved, "environment reads whose name the checker cannot resolve: read a literal, a constant or a range over literals, or teach env_test.go")
	reads := append(goReads, cEnvReads(t, mod)...)
	b, err := os.ReadFile(filepath.Join(mod, "docs", "env.md"))
	require.NoError(t, err)
	table := envTable(t, string(b))
	require.NotEmpty(t, table, "docs/env.md has its table")

	used := map[string]bool{}
	var missing []string
	for _, r := range reads {
		if notDocumented[r.name] != "" {
			continue
		}
		found := false
		for _, d := range table {
			if d.re.MatchString(r.name) {
				used[d.name] = true
				found = true
			}
		}
		if !found {
			missing = append(missing, r.name+" (read by "+r.where+")")
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "variables the code reads that docs/env.md's table lacks")

	var stale []string
	for _, d := range table {
		if used[d.name] {
			continue
		}
		if i := strings.LastIndex(d.name, ">"); i >= 0 && sourceMentions(t, mod, d.name[i+1:]) {
			continue
		}
		stale = append(stale, d.name)
	}
	assert.Empty(t, stale, "docs/env.md names variables the code does not read")
	assert.Greater(t, len(reads), 25, "the checker found the code's reads")
}

// sourceMentions reports whether a C++ header or C file of include/ or
// capi/ holds s inside a string literal.
func sourceMentions(t *testing.T, mod, s string) bool {
	t.Helper()
	found := false
	for _, dir := range []string{"capi", "include"} {
		_ = filepath.WalkDir(filepath.Join(mod, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || found {
				return err
			}
			b, err := os.ReadFile(path)
			if err == nil && strings.Contains(string(b), s+`"`) {
				found = true
			}
			return nil
		})
	}
	return found
}

// The reader itself, on sources of each shape it resolves.
func TestGoEnvReads(t *testing.T) {
	src := `package p
const key = "EMUD_CONST"
func a() { _ = os.Getenv("EMUD_LIT") }
func b() { for _, k := range []string{"MORI_A", "MORI_B"} { os.LookupEnv(k) } }
func c() { _ = os.Getenv(key) }
func envInt(name string, def int) int { v, _ := os.LookupEnv(name); _ = v; return def }
func d() { envInt("EMUD_HELPER", 1) }
func e(s string) string { return os.Getenv(s + "_X") }
var v = os.Getenv("EMUD_VAR")
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	reads, unresolved := goEnvReads([]goFile{{"p.go", f}})
	var names []string
	for _, r := range reads {
		names = append(names, r.name)
	}
	sort.Strings(names)
	assert.Equal(t, []string{"EMUD_CONST", "EMUD_HELPER", "EMUD_LIT", "EMUD_VAR", "MORI_A", "MORI_B"}, names)
	assert.Equal(t, []string{"p.go: e: *ast.BinaryExpr"}, unresolved)
}

func TestEnvTablePatterns(t *testing.T) {
	table := envTable(t, "| `EMUD_SEED` | x |\n| `MORI_<MODULE>_LOG_LEVEL` | y |\nnot | `ROW` |\n")
	require.Len(t, table, 2)
	assert.True(t, table[1].re.MatchString("MORI_SHMEM_LOG_LEVEL"))
	assert.False(t, table[1].re.MatchString("MORI_GLOBAL_LOG_LEVELS"))
	assert.True(t, table[0].re.MatchString("EMUD_SEED"))
	assert.False(t, table[0].re.MatchString("EMUD_SEEDS"))
}
