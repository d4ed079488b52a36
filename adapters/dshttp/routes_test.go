package dshttp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/internal/server/streamroute"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Path kinds of the route cases.
const (
	pathRoot    = "the root path"
	pathStream  = "a stream path"
	pathControl = "a control path"
)

// routeCase is one request shape of the listener and what the gate must
// ask of it.
type routeCase struct {
	name, method, target string
	headers              []string
	body                 string
	kind                 string // pathRoot, pathStream or pathControl
	preflight            bool   // answered before the gate
	want                 authgate.Route
}

func readOf(name string) authgate.Route { return opOn(domain.OpRead, name) }

func opOn(op domain.Op, name string) authgate.Route { return authgate.Route{Op: op, Resource: name} }

var publicRoute = authgate.Route{Public: true}

// routeCases are the listener's request shapes: every method of
// streamroute.Methods on the root path, a stream path and the
// subscription API's paths, with the operation each is.
// TestRouteCasesCoverEveryMethod fails when a method has none on a kind of
// path: a new method needs an entry in route (routes.go), here, and a
// sample request in the end-to-end matrix (tests/e2e/auth_matrix_test.go).
var routeCases = []routeCase{
	{name: "read of the root", method: http.MethodGet, target: "/?offset=-1", kind: pathRoot, want: readOf("/")},
	{name: "head of the root", method: http.MethodHead, target: "/", kind: pathRoot, want: authgate.Route{Op: domain.OpHead, Resource: "/"}},
	{name: "create of the root", method: http.MethodPut, target: "/", kind: pathRoot, want: authgate.Route{Op: domain.OpCreate, Resource: "/"}},
	{name: "append to the root", method: http.MethodPost, target: "/", body: "x", kind: pathRoot, want: authgate.Route{Op: domain.OpAppend, Resource: "/"}},
	{name: "delete of the root", method: http.MethodDelete, target: "/", kind: pathRoot, want: authgate.Route{Op: domain.OpDelete, Resource: "/"}},
	{name: "preflight of the root", method: http.MethodOptions, target: "/", kind: pathRoot, preflight: true,
		headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "GET"}},

	{name: "read", method: http.MethodGet, target: "/s?offset=-1", kind: pathStream, want: readOf("/s")},
	{name: "read of an escaped name", method: http.MethodGet, target: "/a/b%20c", kind: pathStream, want: readOf("/a/b%20c")},
	{name: "live read (long-poll)", method: http.MethodGet, target: "/s?offset=-1&live=long-poll", kind: pathStream,
		want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{name: "live read (SSE)", method: http.MethodGet, target: "/s?live=sse&offset=-1", kind: pathStream,
		want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	// The read takes its live mode from the decoded query, so the gate must
	// too: an escaped key is the same parameter.
	{name: "live read (escaped key)", method: http.MethodGet, target: "/s?offset=-1&liv%65=sse", kind: pathStream,
		want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{name: "head", method: http.MethodHead, target: "/s", kind: pathStream, want: authgate.Route{Op: domain.OpHead, Resource: "/s"}},
	{name: "create", method: http.MethodPut, target: "/s", kind: pathStream, want: authgate.Route{Op: domain.OpCreate, Resource: "/s"}},
	{name: "append", method: http.MethodPost, target: "/s", body: "x", kind: pathStream, want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{name: "append and close", method: http.MethodPost, target: "/s", body: "x", headers: []string{headerClosed, "true"}, kind: pathStream,
		want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{name: "close", method: http.MethodPost, target: "/s", headers: []string{headerClosed, "true"}, kind: pathStream,
		want: authgate.Route{Op: domain.OpClose, Resource: "/s"}},
	{name: "delete", method: http.MethodDelete, target: "/s", kind: pathStream, want: authgate.Route{Op: domain.OpDelete, Resource: "/s"}},
	{name: "preflight", method: http.MethodOptions, target: "/s", kind: pathStream, preflight: true,
		headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "PUT"}},

	{name: "subscription get", method: http.MethodGet, target: "/v1/__ds/subscriptions/s1", kind: pathControl, want: readOf("/v1/")},
	{name: "subscription head", method: http.MethodHead, target: "/v1/__ds/subscriptions/s1", kind: pathControl, want: readOf("/v1/")},
	{name: "subscription put", method: http.MethodPut, target: "/v1/__ds/subscriptions/s1", body: "{}", kind: pathControl, want: opOn(domain.OpCreate, "/v1/")},
	{name: "subscription delete", method: http.MethodDelete, target: "/v1/__ds/subscriptions/s1", kind: pathControl, want: opOn(domain.OpDelete, "/v1/")},
	{name: "subscription streams", method: http.MethodPost, target: "/v1/__ds/subscriptions/s1/streams", body: "{}", kind: pathControl, want: opOn(domain.OpCreate, "/v1/")},
	{name: "subscription stream removal", method: http.MethodDelete, target: "/v1/__ds/subscriptions/s1/streams/%2Fv1%2Fa", kind: pathControl, want: opOn(domain.OpDelete, "/v1/")},
	{name: "subscription claim", method: http.MethodPost, target: "/v1/__ds/subscriptions/s1/claim", body: "{}", kind: pathControl, want: readOf("/v1/")},
	{name: "subscription of the root", method: http.MethodGet, target: "/__ds/subscriptions/s1", kind: pathControl, want: readOf("/")},
	{name: "subscription with an escaped action", method: http.MethodPost, target: "/v1/__ds/subscriptions/s1/%63allback", kind: pathControl, want: readOf("/v1/")},
	{name: "bare control prefix", method: http.MethodGet, target: "/v1/__ds", kind: pathControl, want: readOf("/v1/")},
	{name: "signing keys", method: http.MethodGet, target: "/v1/__ds/jwks.json", kind: pathControl, want: publicRoute},
	{name: "worker callback", method: http.MethodPost, target: "/v1/__ds/subscriptions/s1/callback", body: "{}", kind: pathControl, want: publicRoute},
	{name: "worker ack", method: http.MethodPost, target: "/v1/__ds/subscriptions/s1/ack", body: "{}", kind: pathControl, want: publicRoute},
	{name: "worker release", method: http.MethodPost, target: "/v1/__ds/subscriptions/s1/release", body: "{}", kind: pathControl, want: publicRoute},
	{name: "control preflight", method: http.MethodOptions, target: "/v1/__ds/subscriptions/s1", kind: pathControl, preflight: true,
		headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "PUT"}},
}

func (rc routeCase) request() *http.Request {
	r := httptest.NewRequest(rc.method, rc.target, strings.NewReader(rc.body))
	for i := 0; i+1 < len(rc.headers); i += 2 {
		r.Header.Set(rc.headers[i], rc.headers[i+1])
	}
	return r
}

// TestRouteCasesCoverEveryMethod: every method the listener answers has a
// case on each kind of path.
func TestRouteCasesCoverEveryMethod(t *testing.T) {
	for _, m := range streamroute.Methods {
		for _, kind := range []string{pathRoot, pathStream, pathControl} {
			found := false
			for _, rc := range routeCases {
				found = found || rc.method == m && rc.kind == kind
			}
			if !found {
				t.Errorf("%s on %s has no route case: give it an operation in route (routes.go), a case here and a sample in tests/e2e/auth_matrix_test.go", m, kind)
			}
		}
	}
}

// TestRouteOperations checks the operation route gives each case.
func TestRouteOperations(t *testing.T) {
	for _, rc := range routeCases {
		if rc.preflight {
			continue
		}
		if got := route(rc.request()); got != rc.want {
			t.Errorf("%s: %s %s is %+v, want %+v", rc.name, rc.method, rc.target, got, rc.want)
		}
	}
}

// TestGateDecidesEveryRoute sends every case through the handler with an
// authorizer that refuses: each is refused in plain text before anything
// else, having asked the operation of the case; preflights and public
// control routes pass without asking.
func TestGateDecidesEveryRoute(t *testing.T) {
	for _, refusal := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("%w: no valid credential", ports.ErrUnauthenticated), http.StatusUnauthorized},
		{fmt.Errorf("%w: not allowed", ports.ErrForbidden), http.StatusForbidden},
	} {
		for _, rc := range routeCases {
			t.Run(fmt.Sprintf("%d/%s", refusal.status, rc.name), func(t *testing.T) {
				auth := &handlertest.RecordingAuth{Err: refusal.err}
				h := newHarness(t, func(c *Config) { c.Auth = auth })
				rec := h.do(rc.method, rc.target, []byte(rc.body), rc.headers...)
				reqs := auth.Requests()
				switch {
				case rc.preflight:
					if rec.Code != http.StatusNoContent || len(reqs) != 0 {
						t.Fatalf("preflight: %d after %d authorizations; want 204 without one", rec.Code, len(reqs))
					}
					return
				case rc.want.Public:
					if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden || len(reqs) != 0 {
						t.Fatalf("public route: %d after %d authorizations; want neither 401 nor 403, and none", rec.Code, len(reqs))
					}
					return
				}
				handlertest.WantStatus(t, rec, refusal.status)
				if got, want := rec.Header().Get("WWW-Authenticate"), map[bool]string{true: `Bearer realm="pico"`}[refusal.status == 401]; got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
				if rc.method != http.MethodHead {
					if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || rec.Body.Len() == 0 {
						t.Errorf("%q %q: want a plain-text message", ct, rec.Body)
					}
				}
				if len(reqs) != 1 {
					t.Fatalf("%d authorizations, want 1", len(reqs))
				}
				if r := reqs[0]; r.Op != rc.want.Op || r.Audience != domain.AudienceDurableStreams || r.Resource != rc.want.Resource {
					t.Errorf("asked %+v, want op %s at durable_streams on %q", r, rc.want.Op, rc.want.Resource)
				}
			})
		}
	}
}

// TestGateHoldsLiveReads: an admitted live read is held, and a hold that
// ends while the read waits answers 401 at once, not the long-poll's
// empty answer after its timeout.
func TestGateHoldsLiveReads(t *testing.T) {
	auth := &handlertest.RecordingAuth{EndHolds: true}
	h := newHarness(t, func(c *Config) { c.Auth = auth })
	h.create("/s", "Content-Type", "text/plain")
	for _, rc := range routeCases {
		if rc.preflight || rc.want.Public {
			continue
		}
		before := auth.Holds()
		h.do(rc.method, rc.target, []byte(rc.body), rc.headers...)
		if held := auth.Holds() - before; held != map[bool]int{true: 1}[rc.want.Live] {
			t.Errorf("%s: held %d times, want live=%v", rc.name, held, rc.want.Live)
		}
	}
	h.create("/held", "Content-Type", "text/plain") // the cases deleted /s
	start := time.Now()
	rec := h.do(http.MethodGet, "/held?offset=now&live=long-poll", nil)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the long-poll answered %v after its hold ended", took)
	}
	handlertest.WantStatus(t, rec, http.StatusUnauthorized)
}
