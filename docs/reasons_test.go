// Package docs holds the user documentation; its tests keep the pages true to the code.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sourceDirs are the module's folders whose code writes reasons on objects users read.
var sourceDirs = []string{"../apis", "../cmd", "../pkg", "../plugins"}

// Every reason the code writes on a pod, a PodGroup, a QueueUnit, a Queue, a Command or a mirrored
// PodGroup — condition reasons, event reasons, hold reasons — is explained on the troubleshooting
// page, in backticks.
func TestTroubleshootingCoversEveryReason(t *testing.T) {
	page, err := os.ReadFile("troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	reasons := reasonsInCode(t)
	// The scan must see the reasons it is known to find, or a change of the code's shape could
	// leave it finding nothing.
	for _, known := range []string{"QueueSuspended", "GangIncomplete", "GangUnschedulable", "NotAdmitted",
		"ScheduleFailed", "CommandForbidden", "StateCascaded", "ParentCycle", "Preempted", "MinMemberScheduled"} {
		if !reasons[known] {
			t.Errorf("the scan of the code did not find reason %q", known)
		}
	}
	var missing []string
	for reason := range reasons {
		if !strings.Contains(string(page), "`"+reason+"`") {
			missing = append(missing, reason)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/troubleshooting.md does not explain these reasons the code writes: %s", strings.Join(missing, ", "))
	}
}

// reasonsInCode parses the non-test Go files of sourceDirs and returns the reasons they write.
func reasonsInCode(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, dir := range sourceDirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "generated":
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated"):
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			files = append(files, f)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	consts := stringConstants(files)
	reasons := map[string]bool{}
	for _, f := range files {
		for _, e := range reasonExprs(f) {
			if value, ok := resolve(e, consts); ok && value != "" {
				reasons[value] = true
			}
		}
	}
	return reasons
}

// stringConstants maps the names of the string constants declared in files to their values; a
// name declared twice with different values maps to none.
func stringConstants(files []*ast.File) map[string]string {
	values := map[string]string{}
	ambiguous := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			decl, ok := n.(*ast.GenDecl)
			if !ok || decl.Tok != token.CONST {
				return true
			}
			for _, spec := range decl.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						value, _ := strconv.Unquote(lit.Value)
						if old, seen := values[name.Name]; seen && old != value {
							ambiguous[name.Name] = true
						}
						values[name.Name] = value
					}
				}
			}
			return false
		})
	}
	for name := range ambiguous {
		delete(values, name)
	}
	return values
}

// reasonExprs returns the expressions f writes as a reason: the Reason (or reason) field of a
// composite literal, an assignment to a .Reason field, the argument of WithReason, and the reason
// argument of an event recorder's Event or Eventf (the one after the event type).
func reasonExprs(f *ast.File) []ast.Expr {
	var out []ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if key, ok := n.Key.(*ast.Ident); ok && strings.EqualFold(key.Name, "reason") {
				out = append(out, n.Value)
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" && len(n.Rhs) == len(n.Lhs) {
					out = append(out, n.Rhs[i])
				}
			}
		case *ast.CallExpr:
			out = append(out, callReason(n)...)
		}
		return true
	})
	return out
}

func callReason(call *ast.CallExpr) []ast.Expr {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	switch sel.Sel.Name {
	case "WithReason":
		return call.Args[:1]
	case "Event", "Eventf":
		for i, arg := range call.Args[:len(call.Args)-1] {
			if isEventType(arg) {
				return call.Args[i+1 : i+2]
			}
		}
	}
	return nil
}

func isEventType(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name == "EventTypeNormal" || e.Sel.Name == "EventTypeWarning"
	case *ast.BasicLit:
		return e.Value == `"Normal"` || e.Value == `"Warning"`
	}
	return false
}

// resolve is the string value of e: a literal, or a constant of the module by its name; ok is false
// for anything else (a variable, a constant of another module).
func resolve(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			value, err := strconv.Unquote(e.Value)
			return value, err == nil
		}
	case *ast.Ident:
		value, ok := consts[e.Name]
		return value, ok
	case *ast.SelectorExpr:
		if _, isPackage := e.X.(*ast.Ident); isPackage {
			value, ok := consts[e.Sel.Name]
			return value, ok
		}
	}
	return "", false
}
