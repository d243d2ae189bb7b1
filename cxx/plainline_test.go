package cxx

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlainLineListed: every test a -race test binary skips (one that
// calls plainLine, itself or through a helper of this package's tests) is
// named by .ci/run's plain cxx line, so CI still runs it. A test added
// with plainLine and not listed would run nowhere.
func TestPlainLineListed(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := gotoken.NewFileSet()
	calls := map[string]map[string]bool{} // function -> the package functions it calls
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err, f)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil {
				continue
			}
			callees := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok {
						callees[id.Name] = true
					}
				}
				return true
			})
			calls[fn.Name.Name] = callees
		}
	}
	// The functions that reach plainLine, to a fixed point.
	reach := map[string]bool{"plainLine": true}
	for grew := true; grew; {
		grew = false
		for fn, callees := range calls {
			if reach[fn] {
				continue
			}
			for c := range callees {
				if reach[c] {
					reach[fn], grew = true, true
					break
				}
			}
		}
	}
	var skipped []string
	for fn := range reach {
		if strings.HasPrefix(fn, "Test") {
			skipped = append(skipped, fn)
		}
	}
	sort.Strings(skipped)
	require.NotEmpty(t, skipped, "no test calls plainLine: this check has nothing to hold")

	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^go test -count=1 -run '([^']+)' \./cxx/$`).FindSubmatch(ci)
	require.NotNil(t, line, ".ci/run has no plain line `go test -count=1 -run '...' ./cxx/`")
	run, err := regexp.Compile(string(line[1]))
	require.NoError(t, err)
	for _, name := range skipped {
		assert.True(t, run.MatchString(name), "%s is skipped under -race (plainLine) but .ci/run's plain cxx line does not run it", name)
	}
}
