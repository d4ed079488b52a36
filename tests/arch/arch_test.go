package arch

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/picomq/pico"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// listPackages runs `go list` on the module; std reports standard packages.
func listPackages(t *testing.T) ([]Package, func(string) bool) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = repoRoot(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	std := map[string]bool{}
	var own []Package
	dec := json.NewDecoder(&out)
	for {
		var p struct {
			ImportPath string
			Standard   bool
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		std[p.ImportPath] = p.Standard
		if strings.HasPrefix(p.ImportPath, module) {
			own = append(own, Package{Path: p.ImportPath, Imports: p.Imports})
		}
	}
	return own, func(path string) bool { return std[path] }
}

func TestDependencyRule(t *testing.T) {
	pkgs, isStd := listPackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	for _, v := range Check(module, pkgs, isStd) {
		t.Error(v)
	}
}

// TestCheckCatchesViolations proves the checker can fail: each case breaks
// one rule and must be reported.
func TestCheckCatchesViolations(t *testing.T) {
	std := func(p string) bool { return !strings.Contains(p, ".") }
	cases := map[string]Package{
		"domain reads the clock":       {Path: module + "/domain", Imports: []string{"time"}},
		"domain does I/O":              {Path: module + "/domain", Imports: []string{"os"}},
		"domain uses goroutine sync":   {Path: module + "/domain", Imports: []string{"sync"}},
		"domain imports ports":         {Path: module + "/domain", Imports: []string{module + "/ports"}},
		"ports imports app":            {Path: module + "/ports", Imports: []string{module + "/app/meta"}},
		"app imports an adapter":       {Path: module + "/app/meta", Imports: []string{module + "/adapters/sqllog"}},
		"app imports bun":              {Path: module + "/app/meta", Imports: []string{"github.com/uptrace/bun"}},
		"adapter imports app":          {Path: module + "/adapters/sqllog", Imports: []string{module + "/app/meta"}},
		"adapter imports adapter":      {Path: module + "/adapters/sqllog", Imports: []string{module + "/adapters/memlog"}},
		"ports imports echo":           {Path: module + "/ports", Imports: []string{"github.com/labstack/echo/v4"}},
		"domain imports a third party": {Path: module + "/domain", Imports: []string{"pgregory.net/rapid"}},
	}
	for name, p := range cases {
		if got := Check(module, []Package{p}, std); len(got) != 1 {
			t.Errorf("%s: got %d violations %v, want 1", name, len(got), got)
		}
	}
	allowed := []Package{
		{Path: module + "/domain", Imports: []string{"fmt", "slices"}},
		{Path: module + "/app/meta", Imports: []string{module + "/ports", module + "/domain", "sync", "time"}},
		{Path: module + "/adapters/sqllog", Imports: []string{"github.com/uptrace/bun", module + "/ports"}},
		{Path: module + "/cmd/pico", Imports: []string{module + "/adapters/sqllog", module + "/app/meta"}},
	}
	if got := Check(module, allowed, std); len(got) != 0 {
		t.Errorf("allowed imports reported: %v", got)
	}
}

// TestCheckWireKits proves the one exception to "never another adapter" is
// exactly the named wire kits, and that a kit is held to its own rule.
func TestCheckWireKits(t *testing.T) {
	std := func(p string) bool { return !strings.Contains(p, ".") }
	kit := module + "/adapters/picowire"
	cases := map[string]Package{
		"adapter imports a package below a kit":     {Path: module + "/adapters/picohttp", Imports: []string{kit + "/sub"}},
		"adapter imports a kit-like name":           {Path: module + "/adapters/picohttp", Imports: []string{kit + "x"}},
		"adapter imports an unnamed wire package":   {Path: module + "/adapters/picohttp", Imports: []string{module + "/adapters/dswire"}},
		"kit imports an adapter":                    {Path: kit, Imports: []string{module + "/adapters/picohttp"}},
		"kit imports app":                           {Path: kit, Imports: []string{module + "/app/streams"}},
		"kit imports echo":                          {Path: kit, Imports: []string{"github.com/labstack/echo/v4"}},
		"kit imports a third party":                 {Path: kit, Imports: []string{"pgregory.net/rapid"}},
		"package below a kit imports a third party": {Path: kit + "/sub", Imports: []string{"pgregory.net/rapid"}},
		"app imports a kit":                         {Path: module + "/app/streams", Imports: []string{kit}},
		"ports imports a kit":                       {Path: module + "/ports", Imports: []string{kit}},
		"domain imports a kit":                      {Path: module + "/domain", Imports: []string{kit}},
	}
	for name, p := range cases {
		if got := Check(module, []Package{p}, std); len(got) != 1 {
			t.Errorf("%s: got %d violations %v, want 1", name, len(got), got)
		}
	}
	allowed := []Package{
		{Path: module + "/adapters/picohttp", Imports: []string{kit, module + "/domain", "github.com/labstack/echo/v4"}},
		{Path: module + "/adapters/picoclient", Imports: []string{kit, module + "/adapters/internal/client/httpclient"}},
		{Path: module + "/adapters/dshttp", Imports: []string{kit}},
		{Path: kit, Imports: []string{module + "/domain", module + "/adapters/internal/wire/headerval", "encoding/json"}},
		{Path: module + "/cmd/pico", Imports: []string{kit, module + "/adapters/picoclient"}},
		{Path: module + "/tests/e2e", Imports: []string{kit, module + "/domain"}},
	}
	if got := Check(module, allowed, std); len(got) != 0 {
		t.Errorf("allowed imports reported: %v", got)
	}
	// The rule test above runs on the real module: the kit must be there,
	// or the exception names nothing.
	pkgs, _ := listPackages(t)
	for _, k := range wireKits {
		if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.Path == module+"/"+k }) {
			t.Errorf("wire kit %s is not a package of the module", k)
		}
	}
}

// TestDomainIsDeterministic scans domain's non-test sources for goroutines,
// channels and select statements, which the import rule cannot see.
func TestDomainIsDeterministic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "domain", "*.go"))
	if len(files) == 0 {
		t.Fatal("no domain sources found")
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range concurrencyIn(file) {
			t.Errorf("%s: %s", fset.Position(bad.Pos()), describe(bad))
		}
	}
}

func concurrencyIn(file ast.Node) []ast.Node {
	var found []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.GoStmt, *ast.ChanType, *ast.SelectStmt, *ast.SendStmt:
			found = append(found, n)
		}
		return true
	})
	return found
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.GoStmt:
		return "go statement in domain"
	case *ast.ChanType:
		return "channel type in domain"
	case *ast.SelectStmt:
		return "select in domain"
	}
	return "channel send in domain"
}

func TestConcurrencyScanCatchesGoroutines(t *testing.T) {
	src := "package x\nfunc f(c chan int) { go f(c); c <- 1 }\n"
	file, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(concurrencyIn(file)); got != 3 {
		t.Fatalf("found %d constructs, want 3 (chan type, go, send)", got)
	}
}

// TestTopLevelLayout keeps the repository's tracked top level to the agreed
// folders (untracked local data such as ./data is not the layout).
func TestTopLevelLayout(t *testing.T) {
	cmd := exec.Command("git", "ls-files")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	allowed := []string{"domain", "ports", "adapters", "app", "cmd", "tests", "go.mod", "go.sum",
		"README.md", "ARCHITECTURE.md", "LICENSE"}
	for _, f := range strings.Fields(string(out)) {
		top := strings.SplitN(f, "/", 2)[0]
		if !strings.HasPrefix(top, ".") && !slices.Contains(allowed, top) {
			t.Errorf("unexpected top-level entry %q", top)
		}
	}
}

// A server kit serves the listeners and a storage kit the stores and logs;
// each kind may use its own kind and the client and wire kits.
func TestCheckKitsServeTheirAdapters(t *testing.T) {
	std := func(p string) bool { return !strings.Contains(p, ".") }
	server, storage := module+"/adapters/internal/server/livehttp", module+"/adapters/internal/storage/objkey"
	cases := map[string]Package{
		"client imports a server kit":               {Path: module + "/adapters/picoclient", Imports: []string{server}},
		"log imports a server kit":                  {Path: module + "/adapters/sqllog", Imports: []string{server}},
		"listener imports a storage kit":            {Path: module + "/adapters/picohttp", Imports: []string{storage}},
		"server kit imports a storage kit":          {Path: module + "/adapters/internal/server/streamroute", Imports: []string{storage}},
		"storage kit imports a server kit":          {Path: module + "/adapters/internal/storage/wakeups", Imports: []string{server}},
		"wire kit imports a server kit":             {Path: module + "/adapters/internal/wire/headerval", Imports: []string{server}},
		"a listener-like name imports a server kit": {Path: module + "/adapters/picohttpx", Imports: []string{server}},
	}
	for name, p := range cases {
		if got := Check(module, []Package{p}, std); len(got) != 1 {
			t.Errorf("%s: got %d violations %v, want 1", name, len(got), got)
		}
	}
	allowed := []Package{
		{Path: module + "/adapters/picohttp", Imports: []string{server, module + "/adapters/internal/wire/headerval"}},
		{Path: module + "/adapters/adminhttp", Imports: []string{server, module + "/adapters/internal/client/httpclient"}},
		{Path: module + "/adapters/internal/server/streamroute", Imports: []string{module + "/adapters/internal/server/authgate"}},
		{Path: module + "/adapters/s3store", Imports: []string{storage}},
		{Path: module + "/adapters/memlog", Imports: []string{module + "/adapters/internal/storage/wakeups"}},
		{Path: module + "/adapters/dsclient", Imports: []string{module + "/adapters/internal/client/httpclient"}},
	}
	if got := Check(module, allowed, std); len(got) != 0 {
		t.Errorf("allowed imports reported: %v", got)
	}
}
