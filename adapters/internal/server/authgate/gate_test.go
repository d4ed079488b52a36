package authgate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// fakeAuth records what the gate asks and answers as told.
type fakeAuth struct {
	grant ports.Grant
	err   error

	asked    []ports.AuthRequest
	held     []ports.Grant
	released int
	// end ends the last held context with a cause.
	end context.CancelCauseFunc
}

func (f *fakeAuth) Authorize(req ports.AuthRequest) (ports.Grant, error) {
	f.asked = append(f.asked, req)
	return f.grant, f.err
}

func (f *fakeAuth) Hold(ctx context.Context, g ports.Grant) (context.Context, func()) {
	f.held = append(f.held, g)
	held, cancel := context.WithCancelCause(ctx)
	f.end = cancel
	return held, func() { f.released++; cancel(context.Canceled) }
}

var _ ports.Authorizer = (*fakeAuth)(nil)

// route is a routeOf that answers rt.
func route(rt authgate.Route) func(*http.Request) authgate.Route {
	return func(*http.Request) authgate.Route { return rt }
}

func request(auth string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/stream/x", nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

func tenantGrant() ports.Grant {
	return ports.Grant{TokenID: "tenant", Rev: 7, Scope: domain.Scope{
		Streams: domain.Matchers{{Value: "/tenants/a/", Prefix: true}}, AutoPrefixStreams: true,
		Groups: 1 << domain.GroupStreamRead, Audiences: 1 << domain.AudiencePico}}
}

func TestOff(t *testing.T) {
	for _, g := range []*authgate.Gate{nil, {}, authgate.New(nil, domain.AudiencePico)} {
		if g.On() {
			t.Fatal("a gate without an authorizer is on")
		}
		r := request("")
		got, release, err := g.Admit(r, func(*http.Request) authgate.Route {
			t.Fatal("an off gate asked for the route")
			return authgate.Route{}
		})
		if err != nil || got != r {
			t.Fatalf("off gate: %v, same request %v", err, got == r)
		}
		release()
		if _, ok := authgate.GrantOf(got.Context()); ok {
			t.Fatal("an off gate set a grant")
		}
		if n := authgate.Resolve(got.Context(), "/orders"); n != "/orders" {
			t.Fatalf("Resolve without a grant = %q", n)
		}
	}
}

func TestPublicRouteSkipsTheAuthorizer(t *testing.T) {
	f := &fakeAuth{err: ports.ErrUnauthenticated}
	g := authgate.New(f, domain.AudiencePico)
	if !g.On() {
		t.Fatal("gate off")
	}
	r := request("Bearer junk")
	got, release, err := g.Admit(r, route(authgate.Route{Public: true, Live: true, Op: domain.OpDelete}))
	if err != nil || got != r {
		t.Fatalf("public route: %v", err)
	}
	release()
	if len(f.asked) != 0 || len(f.held) != 0 || f.released != 0 {
		t.Fatalf("public route asked the authorizer: %d asked, %d held, %d released", len(f.asked), len(f.held), f.released)
	}
	if _, ok := authgate.GrantOf(got.Context()); ok {
		t.Fatal("a public route carries a grant")
	}
}

func TestAdmitAsksForTheRoute(t *testing.T) {
	f := &fakeAuth{grant: tenantGrant()}
	g := authgate.New(f, domain.AudienceDurableStreams)
	r := request("Bearer abc.def")
	var routed *http.Request
	got, release, err := g.Admit(r, func(q *http.Request) authgate.Route {
		routed = q
		return authgate.Route{Op: domain.OpAppend, Resource: "/orders"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if routed != r {
		t.Fatal("routeOf was not asked about the request")
	}
	want := ports.AuthRequest{Authorization: "Bearer abc.def", Op: domain.OpAppend, Audience: domain.AudienceDurableStreams, Resource: "/orders"}
	if len(f.asked) != 1 || f.asked[0] != want {
		t.Fatalf("asked %+v, want %+v", f.asked, want)
	}
	if len(f.held) != 0 {
		t.Fatal("a route that is not live was held")
	}
	gr, ok := authgate.GrantOf(got.Context())
	if !ok || gr.TokenID != "tenant" || gr.Rev != 7 {
		t.Fatalf("GrantOf = %+v %v", gr, ok)
	}
	if _, ok := authgate.GrantOf(r.Context()); ok {
		t.Fatal("the original request was changed")
	}
	if n := authgate.Resolve(got.Context(), "/orders"); n != "/tenants/a/orders" {
		t.Fatalf("Resolve(/orders) = %q", n)
	}
	if n := authgate.Resolve(got.Context(), "/tenants/b/x"); n != "/tenants/a/tenants/b/x" {
		t.Fatalf("Resolve(/tenants/b/x) = %q", n)
	}
	if err := authgate.Ended(got, nil); err != nil {
		t.Fatalf("Ended on a request that did not end: %v", err)
	}

	// A plain grant resolves names as they are.
	f.grant = ports.Grant{TokenID: "root", Scope: domain.RootScope()}
	got, _, err = g.Admit(request(""), route(authgate.Route{Op: domain.OpRead, Resource: "/orders"}))
	if err != nil {
		t.Fatal(err)
	}
	if f.asked[1].Authorization != "" {
		t.Fatalf("no header asked as %q", f.asked[1].Authorization)
	}
	if n := authgate.Resolve(got.Context(), "/orders"); n != "/orders" {
		t.Fatalf("Resolve under a plain grant = %q", n)
	}
}

func TestDenials(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("%w: the token is unknown", ports.ErrUnauthenticated), http.StatusUnauthorized},
		{ports.ErrUnauthenticated, http.StatusUnauthorized},
		{fmt.Errorf("%w: the token does not cover this resource", ports.ErrForbidden), http.StatusForbidden},
		{ports.ErrForbidden, http.StatusForbidden},
	} {
		f := &fakeAuth{grant: tenantGrant(), err: c.err}
		g := authgate.New(f, domain.AudiencePico)
		r := request("Bearer x")
		got, release, err := g.Admit(r, route(authgate.Route{Op: domain.OpRead, Resource: "/x", Live: true}))
		if !errors.Is(err, c.err) {
			t.Fatalf("Admit: %v, want %v", err, c.err)
		}
		if got == nil {
			t.Fatal("a denial returned no request")
		}
		release()
		if len(f.held) != 0 || f.released != 0 {
			t.Fatal("a denied live request was held")
		}
		if _, ok := authgate.GrantOf(got.Context()); ok {
			t.Fatal("a denied request carries a grant")
		}
		if s := authgate.Status(err); s != c.status {
			t.Fatalf("Status(%v) = %d, want %d", err, s, c.status)
		}
		h := http.Header{}
		authgate.SetChallenge(h, authgate.Status(err))
		if want := map[int]string{401: `Bearer realm="pico"`, 403: ""}[c.status]; h.Get("WWW-Authenticate") != want {
			t.Fatalf("challenge for %d: %q", c.status, h.Get("WWW-Authenticate"))
		}
	}
	for _, err := range []error{nil, errors.New("other"), ports.ErrBadRequest, ports.ErrTokenNotFound} {
		if s := authgate.Status(err); s != 0 {
			t.Fatalf("Status(%v) = %d, want 0", err, s)
		}
	}
}

func TestLiveRouteIsHeld(t *testing.T) {
	f := &fakeAuth{grant: tenantGrant()}
	g := authgate.New(f, domain.AudiencePico)
	type key struct{}
	r := request("Bearer x")
	r = r.WithContext(context.WithValue(r.Context(), key{}, "kept"))
	got, release, err := g.Admit(r, route(authgate.Route{Op: domain.OpRead, Resource: "/x", Live: true}))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.held) != 1 || f.held[0].TokenID != "tenant" || f.held[0].Rev != 7 {
		t.Fatalf("held %+v", f.held)
	}
	if got.Context().Value(key{}) != "kept" {
		t.Fatal("the held context lost the request's values")
	}
	if gr, ok := authgate.GrantOf(got.Context()); !ok || gr.TokenID != "tenant" {
		t.Fatal("the held context lost the grant")
	}
	other := errors.New("read failed")
	if err := authgate.Ended(got, other); err != other {
		t.Fatalf("Ended before the end: %v", err)
	}

	// The hold ends the request's context: Ended says why.
	cause := fmt.Errorf("%w: the token was revoked or has expired", ports.ErrUnauthenticated)
	f.end(cause)
	select {
	case <-got.Context().Done():
	default:
		t.Fatal("the admitted request's context is not the held one")
	}
	if err := authgate.Ended(got, context.Canceled); err != cause {
		t.Fatalf("Ended = %v, want the hold's cause", err)
	}
	if authgate.Status(authgate.Ended(got, other)) != http.StatusUnauthorized {
		t.Fatal("an ended live read does not answer 401")
	}
	if f.released != 0 {
		t.Fatal("released before the request ended")
	}
	release()
	if f.released != 1 {
		t.Fatalf("released %d times, want 1", f.released)
	}
}

func TestEndedByOtherCauses(t *testing.T) {
	f := &fakeAuth{grant: tenantGrant()}
	g := authgate.New(f, domain.AudiencePico)
	other := errors.New("read failed")

	// Released (the request ended on its own): not the gate's error.
	got, release, err := g.Admit(request("Bearer x"), route(authgate.Route{Op: domain.OpRead, Live: true}))
	if err != nil {
		t.Fatal(err)
	}
	release()
	if err := authgate.Ended(got, other); err != other {
		t.Fatalf("Ended after a release = %v", err)
	}

	// The client went away: not the gate's error either.
	parent, cancel := context.WithCancel(context.Background())
	r := request("Bearer x").WithContext(parent)
	got, release, err = g.Admit(r, route(authgate.Route{Op: domain.OpRead, Live: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	cancel()
	if err := authgate.Ended(got, other); err != other {
		t.Fatalf("Ended after the client left = %v", err)
	}
	// A forbidden cause is not an end of the grant.
	got, release2, _ := g.Admit(request("Bearer x"), route(authgate.Route{Op: domain.OpRead, Live: true}))
	defer release2()
	f.end(ports.ErrForbidden)
	if err := authgate.Ended(got, other); err != other {
		t.Fatalf("Ended with a forbidden cause = %v", err)
	}
}

// TestTheGrantGoesWhereAHandlerMayAskForIt: a request on one stream under
// a plain scope is served as it came (no context to carry the grant);
// every request whose handler decides by the grant carries it.
func TestTheGrantGoesWhereAHandlerMayAskForIt(t *testing.T) {
	plain := ports.Grant{TokenID: "plain", Scope: domain.RootScope()}
	for _, c := range []struct {
		what  string
		grant ports.Grant
		route authgate.Route
		want  bool
	}{
		{"an append", plain, authgate.Route{Op: domain.OpAppend, Resource: "/s"}, false},
		{"a read", plain, authgate.Route{Op: domain.OpRead, Resource: "/s"}, false},
		{"a live read", plain, authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}, true},
		{"a listing", plain, authgate.Route{Op: domain.OpList}, true},
		{"an auto-prefixed append", tenantGrant(), authgate.Route{Op: domain.OpAppend, Resource: "/s"}, true},
		{"a token issue", plain, authgate.Route{Op: domain.OpIssueToken}, true},
		{"a token revoke naming its id", plain, authgate.Route{Op: domain.OpRevokeToken, Resource: "svc/a"}, true},
		{"an admin read", plain, authgate.Route{Op: domain.OpClusterRead}, true},
		{"a stream op naming none", plain, authgate.Route{Op: domain.OpRead}, true},
	} {
		g := authgate.New(&fakeAuth{grant: c.grant}, domain.AudiencePico)
		r := request("Bearer abc.def")
		got, release, err := g.Admit(r, func(*http.Request) authgate.Route { return c.route })
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		_, carried := authgate.GrantOf(got.Context())
		if carried != c.want || (got == r) == c.want {
			t.Errorf("%s: grant carried %v (request replaced %v), want %v", c.what, carried, got != r, c.want)
		}
		release()
	}
}

func TestRelativeMessagesNameStreamsAsTheClientDoes(t *testing.T) {
	g := authgate.New(&fakeAuth{grant: tenantGrant()}, domain.AudiencePico)
	got, release, err := g.Admit(request("Bearer abc.def"), func(*http.Request) authgate.Route {
		return authgate.Route{Op: domain.OpRead, Resource: "/orders"}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if m := authgate.Relative(got.Context(), "no such stream: /tenants/a/orders"); m != "no such stream: /orders" {
		t.Errorf("under the tenant: %q", m)
	}
	if m := authgate.Relative(request("").Context(), "no such stream: /tenants/a/orders"); m != "no such stream: /tenants/a/orders" {
		t.Errorf("without a grant: %q", m)
	}
}
