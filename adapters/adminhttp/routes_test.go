package adminhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// wantRoutes is every route the admin listener serves and the operation
// it is. A route registered without an entry here fails
// TestEveryRouteHasAnOperation: give it an operation in routes
// (server.go), an entry here and a sample request in the end-to-end
// matrix (tests/e2e/auth_matrix_test.go).
var wantRoutes = map[string]authgate.Route{
	"GET /health":                 public,
	"GET /ready":                  public,
	"GET /":                       public,
	"GET /dashboard.js":           public,
	"GET /dashboard.css":          public,
	"GET /openapi.yaml":           public,
	"GET /admin/cluster":          op(domain.OpClusterRead),
	"GET /admin/nodes":            op(domain.OpNodeRead),
	"POST /admin/nodes/:id":       op(domain.OpUpdateNodeSlots),
	"POST /admin/nodes/:id/drain": op(domain.OpDrainNode),
	"GET /admin/nodes/:id/drain":  op(domain.OpNodeRead),
	"GET /admin/streams/*":        op(domain.OpStreamInspect),
	"POST /admin/transfer":        op(domain.OpTransferStream),
	"GET /metrics":                op(domain.OpClusterRead),
	"GET /admin/tokens":           op(domain.OpListTokens),
	"POST /admin/tokens":          op(domain.OpIssueToken),
	"DELETE /admin/tokens/*":      op(domain.OpRevokeToken),
}

var testOpenAPI = []byte("openapi: 3.1.0\n")

// TestEveryRouteHasAnOperation: every route New registers with echo is one
// of the route table's, so the gate runs before it, and the table is the
// one expected here, operation by operation.
func TestEveryRouteHasAnOperation(t *testing.T) {
	table := map[string]authgate.Route{}
	for _, rt := range routes(handlers{n: &stubNode{}}, testOpenAPI) {
		key := rt.method + " " + rt.path
		if _, dup := table[key]; dup {
			t.Errorf("%s is in the route table twice", key)
		}
		table[key] = rt.auth
		if !rt.auth.Public && rt.auth.Op.Group() < domain.GroupTokensRead {
			t.Errorf("%s is a stream operation (%s); the admin listener serves none", key, rt.auth.Op)
		}
	}
	e := newEcho(&stubNode{}, testOpenAPI)
	registered := map[string]bool{}
	for _, r := range e.Routes() {
		key := r.Method + " " + r.Path
		registered[key] = true
		if _, ok := table[key]; !ok {
			t.Errorf("%s is registered outside the route table: the gate does not decide it", key)
		}
		want, ok := wantRoutes[key]
		switch {
		case !ok:
			t.Errorf("%s has no expected operation: add it to wantRoutes and a sample to tests/e2e/auth_matrix_test.go", key)
		case want != table[key]:
			t.Errorf("%s is %+v, want %+v", key, table[key], want)
		}
	}
	for key := range wantRoutes {
		if !registered[key] {
			t.Errorf("%s is expected but not registered", key)
		}
	}
}

// TestGateDecidesEveryAdminRoute sends a request to every route with an
// authorizer that refuses: the public routes answer without asking it,
// every other is refused with the admin error JSON, having asked its
// operation at the admin audience.
func TestGateDecidesEveryAdminRoute(t *testing.T) {
	for _, refusal := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("%w: no valid credential", ports.ErrUnauthenticated), http.StatusUnauthorized},
		{fmt.Errorf("%w: not allowed", ports.ErrForbidden), http.StatusForbidden},
	} {
		for key, want := range wantRoutes {
			t.Run(fmt.Sprintf("%d/%s", refusal.status, key), func(t *testing.T) {
				auth := &recordingAuth{err: refusal.err}
				h := New(&stubNode{auth: auth}, testOpenAPI)
				method, path, _ := strings.Cut(key, " ")
				path = strings.NewReplacer(":id", "1", "*", "x").Replace(path)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader("{}")))
				reqs := auth.requests()
				if want.Public {
					if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden || len(reqs) != 0 {
						t.Fatalf("public route: %d after %d authorizations; want neither 401 nor 403, and none", rec.Code, len(reqs))
					}
					return
				}
				if rec.Code != refusal.status {
					t.Fatalf("status %d, want %d; body %q", rec.Code, refusal.status, rec.Body)
				}
				if got, want := rec.Header().Get("WWW-Authenticate"), map[bool]string{true: `Bearer realm="pico"`}[refusal.status == 401]; got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
				var body adminwire.Error
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" {
					t.Errorf("body %q (%v), want the admin error JSON", rec.Body, err)
				}
				if len(reqs) != 1 {
					t.Fatalf("%d authorizations, want 1", len(reqs))
				}
				if r := reqs[0]; r.Op != want.Op || r.Audience != domain.AudienceAdmin || r.Resource != "" {
					t.Errorf("asked %+v, want op %s at admin on no resource", r, want.Op)
				}
			})
		}
	}
}

// stubNode is an AuthNode with nothing in it, deciding by auth.
type stubNode struct{ auth ports.Authorizer }

func (n *stubNode) Health() error                                           { return nil }
func (n *stubNode) Ready() error                                            { return nil }
func (n *stubNode) View() domain.State                                      { return domain.NewState() }
func (n *stubNode) LeaseHolder() (uint64, bool)                             { return 0, false }
func (n *stubNode) SetSlots(context.Context, domain.NodeID, uint32) error   { return nil }
func (n *stubNode) Transfer(context.Context, string, domain.NodeID) error   { return nil }
func (n *stubNode) DrainNode(context.Context, domain.NodeID) (Drain, error) { return Drain{}, nil }
func (n *stubNode) DrainProgress(domain.NodeID) Drain                       { return Drain{} }
func (n *stubNode) Metrics() []Metric                                       { return nil }
func (n *stubNode) Auth() ports.Authorizer                                  { return n.auth }
func (n *stubNode) Tokens() ports.TokenAdmin                                { return nil }

// recordingAuth records what the gate asks and refuses with err.
type recordingAuth struct {
	err error

	mu   sync.Mutex
	reqs []ports.AuthRequest
}

func (a *recordingAuth) Authorize(req ports.AuthRequest) (ports.Grant, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, req)
	return ports.Grant{}, a.err
}

func (a *recordingAuth) Hold(ctx context.Context, _ ports.Grant) (context.Context, func()) {
	return ctx, func() {}
}

func (a *recordingAuth) requests() []ports.AuthRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ports.AuthRequest(nil), a.reqs...)
}
