package dshttp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// scopeAuth allows what one scope allows, to any request, credential or
// not: the listener's side of the gate, without tokens.
type scopeAuth struct{ scope domain.Scope }

func (a scopeAuth) Authorize(req ports.AuthRequest) (ports.Grant, error) {
	resource := req.Resource
	if resource != "" && req.Op.Resource() == domain.ResourceStream {
		resource = a.scope.Resolve(resource)
	}
	if d := a.scope.Check(req.Op, req.Audience, resource, 0); d != domain.DenyNone {
		return ports.Grant{}, ports.ErrForbidden
	}
	return ports.Grant{TokenID: "t", Scope: a.scope}, nil
}

func (scopeAuth) Hold(ctx context.Context, _ ports.Grant) (context.Context, func()) {
	return ctx, func() {}
}

func withScope(scope domain.Scope) func(*Config) {
	return func(c *Config) { c.Auth = scopeAuth{scope} }
}

func TestAForkNeedsReadOnItsSource(t *testing.T) {
	root := newHarness(t)
	root.create("/secret/s", "Content-Type", "text/plain")
	root.appendBodies("/secret/s", "text/plain", "hidden")
	writer := domain.Scope{Streams: domain.Matchers{{Value: "/a/", Prefix: true}},
		Groups: 1<<domain.GroupStreamRead | 1<<domain.GroupStreamWrite, Audiences: 1 << domain.AudienceDurableStreams}
	h := newHarness(t, withScope(writer))
	h.fake = root.fake
	h.srv.streams = root.fake
	rec := h.do(http.MethodPut, "/a/copy", nil, headerForkedFrom, "/secret/s")
	if rec.Code != http.StatusForbidden {
		t.Fatalf("a fork of a stream outside the scope: %d %s, want 403", rec.Code, rec.Body)
	}
	if rec := h.do(http.MethodPut, "/a/ok", nil, "Content-Type", "text/plain"); rec.Code != http.StatusCreated {
		t.Fatalf("a plain create inside the scope: %d %s", rec.Code, rec.Body)
	}
	// The fake forks nothing (400), but the request got past the gate.
	if rec := h.do(http.MethodPut, "/a/fork", nil, headerForkedFrom, "/a/ok"); rec.Code == http.StatusForbidden {
		t.Fatalf("a fork inside the scope: %d %s", rec.Code, rec.Body)
	}
}

func TestAutoPrefixedNamesResolveInsideThePrefix(t *testing.T) {
	tenant := domain.Scope{Streams: domain.Matchers{{Value: "/tenants/a/", Prefix: true}}, AutoPrefixStreams: true,
		Groups: 1<<domain.GroupStreamRead | 1<<domain.GroupStreamWrite, Audiences: 1 << domain.AudienceDurableStreams}
	h := newHarness(t, withScope(tenant))
	rec := h.do(http.MethodPut, "/copy", nil, "Content-Type", "text/plain")
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, "/copy") || strings.Contains(loc, "tenants") {
		t.Errorf("Location %q: want the client's own name", loc)
	}
	if _, err := h.fake.Head(context.Background(), "/tenants/a/copy"); err != nil {
		t.Errorf("the stream is not stored inside the prefix: %v", err)
	}
	// An error names the stream as the client does.
	if rec := h.do(http.MethodGet, "/none", nil); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "tenants") {
		t.Errorf("a read of a missing stream: %d %q, want 404 naming no prefix", rec.Code, rec.Body)
	}
	// Another tenant's path names a stream inside this one's prefix, which
	// the scope covers: past the gate (the fake forks nothing: 400).
	if rec := h.do(http.MethodPut, "/fork", nil, headerForkedFrom, "/tenants/b/x"); rec.Code == http.StatusForbidden {
		t.Errorf("a fork from a name that resolves inside the prefix: %d %s", rec.Code, rec.Body)
	}
}
