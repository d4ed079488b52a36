package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoClientAPIIsItsOwn: the Go client's exported API uses only its own
// types and the standard library, so a program that imports it depends
// on nothing of the server.
func TestGoClientAPIIsItsOwn(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "adapters", "picoclient")
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 5 {
		t.Fatalf("only %d files in %s", len(files), dir)
	}
	for _, v := range ForeignAPITypes(fset, files) {
		t.Errorf("the client's API names a type from outside it and the standard library: %s", v)
	}
}

// TestForeignAPITypesCatchesLeaks proves the check can fail.
func TestForeignAPITypesCatchesLeaks(t *testing.T) {
	const src = `package p
import (
	"context"
	"github.com/picomq/pico/domain"
	sem "golang.org/x/sync/semaphore"
	"github.com/picomq/pico/adapters/internal/client/httpclient"
)
type Client struct {
	*httpclient.Endpoint
	budget *sem.Weighted
}
type Options = httpclient.Options
func (c *Client) Append(ctx context.Context, r []domain.Record) error { return nil }
func (c *Client) hidden(r domain.Record) {}
func Limit() *sem.Weighted { return nil }
var Default domain.Header
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := ForeignAPITypes(fset, []*ast.File{f})
	want := []string{"httpclient.Endpoint", "httpclient.Options", "domain.Record", "sem.Weighted", "domain.Header"}
	if len(got) != len(want) {
		t.Fatalf("found %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasSuffix(got[i], want[i]) {
			t.Fatalf("found %q, want %q", got, want)
		}
	}
}
