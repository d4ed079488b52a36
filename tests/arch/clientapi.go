package arch

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// ForeignAPITypes lists the types from outside the standard library that a
// package's exported API names: in exported functions and methods, the
// exported or embedded fields of exported structs, exported interfaces,
// and the types of exported variables and constants. files are the
// package's non-test files.
func ForeignAPITypes(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	for _, f := range files {
		imports := importPaths(f)
		foreign := func(n ast.Node) {
			ast.Inspect(n, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && isForeign(imports[id.Name]) {
					out = append(out, fmt.Sprintf("%s: %s.%s", fset.Position(sel.Pos()), id.Name, sel.Sel.Name))
				}
				return false
			})
		}
		for _, d := range f.Decls {
			for _, n := range exportedTypeExprs(d) {
				foreign(n)
			}
		}
	}
	return out
}

// exportedTypeExprs are the type expressions of d that its exported API
// shows.
func exportedTypeExprs(d ast.Decl) []ast.Node {
	var out []ast.Node
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Name.IsExported() && (d.Recv == nil || exportedReceiver(d.Recv)) {
			out = append(out, d.Type)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					out = append(out, shownFields(s.Type)...)
				}
			case *ast.ValueSpec:
				if s.Type != nil && s.Names[0].IsExported() {
					out = append(out, s.Type)
				}
			}
		}
	}
	return out
}

// shownFields is a type's exported and embedded fields, or the type
// itself when it is not a struct.
func shownFields(t ast.Expr) []ast.Node {
	st, ok := t.(*ast.StructType)
	if !ok {
		return []ast.Node{t}
	}
	var out []ast.Node
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 || f.Names[0].IsExported() {
			out = append(out, f.Type)
		}
	}
	return out
}

func exportedReceiver(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// importPaths maps a file's import names to their paths.
func importPaths(f *ast.File) map[string]string {
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

// isForeign reports whether an import path is outside the standard
// library (whose first element has no dot).
func isForeign(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return path != "" && strings.Contains(first, ".")
}
