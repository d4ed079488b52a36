// Package arch enforces the dependency rule of the hexagonal layout: what
// each top-level folder may import. The rule is a test, not a diagram.
package arch

import (
	"fmt"
	"slices"
	"strings"
)

// Package is what the rules need to know of one Go package.
type Package struct {
	Path    string   // import path
	Imports []string // direct imports, test files excluded
}

// domainStd lists the only standard-library packages domain may import:
// nothing that reads a clock, draws randomness, does I/O or runs goroutines.
var domainStd = []string{
	"bytes", "cmp", "crypto/sha256", "encoding/base64", "encoding/binary", "encoding/hex", "encoding/json", "errors", "fmt",
	"hash/crc32", "maps", "math", "math/bits", "slices", "sort", "strconv", "strings",
	"unicode", "unicode/utf8",
}

// vendorOnlyInAdapters are third-party libraries confined to adapters/.
var vendorOnlyInAdapters = []string{
	"github.com/uptrace/bun", "github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go",
	"github.com/labstack/echo", "github.com/jackc/pgx", "modernc.org/sqlite", "github.com/prometheus/client_golang",
}

// wireKits are the shared wire kits: adapter packages holding one
// protocol's wire format for both of its ends, the listener and the client.
// Any adapter may import a kit named here (exactly that package, not one
// below it). A kit and its own packages import only the standard library
// and this module, never a third-party library (both ends, the CLI and the
// tests import it), and, like every adapter, never app or another adapter.
var wireKits = []string{"adapters/picowire"}

// Kits under adapters/internal, by the adapters they serve: a server kit
// (adapters/internal/server/...) only the listeners, a storage kit
// (adapters/internal/storage/...) only the stores and logs, each also the
// other kits of its kind. Client and wire kits (adapters/internal/client,
// adapters/internal/wire) serve any adapter.
var (
	listeners      = []string{"adapters/picohttp", "adapters/dshttp", "adapters/adminhttp", "adapters/webhookhttp"}
	storesAndLogs  = []string{"adapters/sqllog", "adapters/memlog", "adapters/s3store", "adapters/filestore", "adapters/memstore"}
	kitsByAdapters = map[string][]string{
		"adapters/internal/server":  listeners,
		"adapters/internal/storage": storesAndLogs,
	}
)

// Check returns every violation of the dependency rule among pkgs. module is
// the module path; isStd reports whether an import path is standard library.
func Check(module string, pkgs []Package, isStd func(string) bool) []string {
	var bad []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.Path, module), "/")
		for _, imp := range p.Imports {
			if why := violation(module, rel, imp, isStd(imp)); why != "" {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s", p.Path, imp, why))
			}
		}
	}
	return bad
}

func violation(module, rel, imp string, std bool) string {
	own, isOwn := strings.CutPrefix(imp, module+"/")
	layer := strings.SplitN(rel, "/", 2)[0]
	switch {
	case layer == "domain" && std && !slices.Contains(domainStd, imp):
		return "domain may use only the deterministic standard library allow-list"
	case layer == "domain" && !std && !(isOwn && under(own, "domain")):
		return "domain may import nothing outside the standard library"
	case layer == "ports" && !std && !(isOwn && (under(own, "domain") || under(own, "ports"))):
		return "ports may import only domain and the standard library"
	case layer == "app" && !std && !(isOwn && (under(own, "domain") || under(own, "ports") || under(own, "app"))):
		return "app may import only domain, ports and app"
	case layer == "adapters" && isOwn && !adapterMayImport(rel, own):
		return "an adapter may import domain, ports, its own packages and the shared wire kits, never app or another adapter"
	case layer == "adapters" && isOwn && !kitServes(own, rel):
		return "a server kit serves only the listeners, a storage kit only the stores and logs"
	case layer == "adapters" && !std && !isOwn && isWireKit(rel):
		return "a shared wire kit may import only the standard library and this module"
	case layer != "adapters" && layer != "cmd" && layer != "tests" && isVendorConfined(imp):
		return "bun, aws-sdk, echo and database drivers belong in adapters/"
	}
	return ""
}

func adapterMayImport(rel, own string) bool {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 2 {
		return false
	}
	mine := "adapters/" + parts[1]
	return under(own, "domain") || under(own, "ports") || under(own, mine) || under(own, "adapters/internal") ||
		slices.Contains(wireKits, own)
}

// kitServes reports whether the package at rel may import own as far as
// kits go: own is no server or storage kit, or rel is one of the adapters
// (or kits) that kind of kit serves.
func kitServes(own, rel string) bool {
	for kind, users := range kitsByAdapters {
		if under(own, kind) {
			return under(rel, kind) || slices.ContainsFunc(users, func(a string) bool { return under(rel, a) })
		}
	}
	return true
}

// isWireKit reports whether the package at rel (relative to the module) is
// a shared wire kit or one of its own packages.
func isWireKit(rel string) bool {
	return slices.ContainsFunc(wireKits, func(kit string) bool { return under(rel, kit) })
}

func isVendorConfined(imp string) bool {
	for _, v := range vendorOnlyInAdapters {
		if imp == v || strings.HasPrefix(imp, v+"/") {
			return true
		}
	}
	return false
}

func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }
