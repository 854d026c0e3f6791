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

	v1 "k8s.io/api/core/v1"
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
	// A hold without a reason of its own is reported as Unschedulable (holdreport.Reporter.Held),
	// Kubernetes' constant.
	reasons[v1.PodReasonUnschedulable] = true
	// The scan must see the reasons it is known to find, or a change of the code's shape could
	// leave it finding nothing.
	for _, known := range []string{"QueueSuspended", "GangIncomplete", "GangUnschedulable", "NotAdmitted", "PodGroupPending",
		"ScheduleFailed", "CommandForbidden", "StateCascaded", "ParentCycle", "Preempted", "MinMemberScheduled", "NotMirrored",
		"Closing"} {
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

// module is the import path of the module's root, one folder up.
const module = "github.com/queue-scheduler/queue-scheduler"

// sourceFile is a parsed file and the import path of its package.
type sourceFile struct {
	*ast.File
	pkg string
}

// reasonsInCode parses the non-test Go files of sourceDirs and returns the reasons they write.
func reasonsInCode(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	var files []sourceFile
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
			files = append(files, sourceFile{File: f, pkg: module + "/" + filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../")))})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	consts := stringConstants(files)
	reasons := map[string]bool{}
	for _, f := range files {
		imports := importsOf(f)
		for _, e := range reasonExprs(f.File) {
			if value, ok := resolve(e, f.pkg, imports, consts); ok && value != "" {
				reasons[value] = true
			}
		}
	}
	return reasons
}

// stringConstants maps "import/path.Name" of the string constants declared in files to their values.
func stringConstants(files []sourceFile) map[string]string {
	values := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						values[f.pkg+"."+name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	return values
}

// importsOf maps the names a file gives its imports to their paths.
func importsOf(f sourceFile) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = path
	}
	return out
}

// reasonExprs returns the expressions f writes as a reason: the Reason (or reason) field of a
// composite literal, an assignment to a .Reason field, the argument of WithReason, the argument
// after an event type in any call (an event recorder's Event and Eventf, and helpers that pass
// theirs on), and what a function whose result is named reason returns as it.
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
		case *ast.FuncDecl:
			out = append(out, returnedReasons(n)...)
		}
		return true
	})
	return out
}

func callReason(call *ast.CallExpr) []ast.Expr {
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithReason" && len(call.Args) == 1 {
		return call.Args
	}
	for i := 0; i+1 < len(call.Args); i++ {
		if isEventType(call.Args[i]) {
			return call.Args[i+1 : i+2]
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

// returnedReasons returns, for a function with a result named reason, what each of its return
// statements gives as that result.
func returnedReasons(fn *ast.FuncDecl) []ast.Expr {
	if fn.Type.Results == nil || fn.Body == nil {
		return nil
	}
	index, at := -1, 0
	for _, field := range fn.Type.Results.List {
		for _, name := range field.Names {
			if name.Name == "reason" {
				index = at
			}
			at++
		}
	}
	if index < 0 {
		return nil
	}
	var out []ast.Expr
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) == at {
				out = append(out, n.Results[index])
			}
		}
		return true
	})
	return out
}

// resolve is the string value of e in a file of package pkg: a literal, or a constant of the
// module; ok is false for anything else (a variable, a constant of another module).
func resolve(e ast.Expr, pkg string, imports, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			value, err := strconv.Unquote(e.Value)
			return value, err == nil
		}
	case *ast.Ident:
		value, ok := consts[pkg+"."+e.Name]
		return value, ok
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
			value, ok := consts[imports[x.Name]+"."+e.Sel.Name]
			return value, ok
		}
	}
	return "", false
}
