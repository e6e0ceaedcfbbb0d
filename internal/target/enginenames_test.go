package target_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// engineNames are the kinds and URL schemes of the engines.
var engineNames = map[string]bool{
	"postgres": true, "postgresql": true, "pgsql": true, "mysql": true, "mariadb": true, "sqlite": true, "sqlite3": true,
}

// TestNoEngineNameChecks fails on any branch on an engine's name outside
// the engine packages: a comparison with, or a switch case of, an engine
// name, and a comparison of a placeholder's text (which guesses the
// engine from it). What differs between engines is the Dialect's to say,
// so that a new engine (one reusing PostgreSQL's protocol included) is
// added in its own package and is never taken for another. Test files are
// exempt: they name engines to set up the servers they run against.
func TestNoEngineNameChecks(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor" || rel == "internal/target" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				for _, side := range []ast.Expr{n.X, n.Y} {
					if engineName(side) || placeholderCall(side) {
						t.Errorf("%s: %s compares an engine's name or placeholder: ask the Dialect instead", fset.Position(n.Pos()), rel)
						break
					}
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if engineName(e) {
						t.Errorf("%s: %s switches on an engine's name: ask the Dialect instead", fset.Position(e.Pos()), rel)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// engineName says whether e is a string literal naming an engine.
func engineName(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && engineNames[strings.ToLower(s)]
}

// placeholderCall says whether e is a call of a Placeholder method.
func placeholderCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Placeholder"
}
