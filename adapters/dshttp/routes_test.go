package dshttp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/handlertest"
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
func readOf(name string) authgate.Route { return opOn(domain.OpRead, name) }

func opOn(op domain.Op, name string) authgate.Route { return authgate.Route{Op: op, Resource: name} }

var publicRoute = authgate.Route{Public: true}

// routeCases are the listener's request shapes: every method of
// streamroute.Methods on the root path, a stream path and the
// subscription API's paths, with the operation each is.
// TestRouteCasesCoverEveryMethod fails when a method has none on a kind of
// path: a new method needs an entry in route (routes.go), here, and a
// sample request in the end-to-end matrix (tests/e2e/auth_matrix_test.go).
var routeCases = []handlertest.RouteCase{
	{Name: "read of the root", Method: http.MethodGet, Target: "/?offset=-1", Kind: pathRoot, Want: readOf("/")},
	{Name: "head of the root", Method: http.MethodHead, Target: "/", Kind: pathRoot, Want: authgate.Route{Op: domain.OpHead, Resource: "/"}},
	{Name: "create of the root", Method: http.MethodPut, Target: "/", Kind: pathRoot, Want: authgate.Route{Op: domain.OpCreate, Resource: "/"}},
	{Name: "append to the root", Method: http.MethodPost, Target: "/", Body: "x", Kind: pathRoot, Want: authgate.Route{Op: domain.OpAppend, Resource: "/"}},
	{Name: "delete of the root", Method: http.MethodDelete, Target: "/", Kind: pathRoot, Want: authgate.Route{Op: domain.OpDelete, Resource: "/"}},
	{Name: "preflight of the root", Method: http.MethodOptions, Target: "/", Kind: pathRoot, Preflight: true,
		Headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "GET"}},

	{Name: "read", Method: http.MethodGet, Target: "/s?offset=-1", Kind: pathStream, Want: readOf("/s")},
	{Name: "read of an escaped name", Method: http.MethodGet, Target: "/a/b%20c", Kind: pathStream, Want: readOf("/a/b%20c")},
	{Name: "live read (long-poll)", Method: http.MethodGet, Target: "/s?offset=-1&live=long-poll", Kind: pathStream,
		Want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{Name: "live read (SSE)", Method: http.MethodGet, Target: "/s?live=sse&offset=-1", Kind: pathStream,
		Want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	// The read takes its live mode from the decoded query, so the gate must
	// too: an escaped key is the same parameter.
	{Name: "live read (escaped key)", Method: http.MethodGet, Target: "/s?offset=-1&liv%65=sse", Kind: pathStream,
		Want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{Name: "head", Method: http.MethodHead, Target: "/s", Kind: pathStream, Want: authgate.Route{Op: domain.OpHead, Resource: "/s"}},
	{Name: "create", Method: http.MethodPut, Target: "/s", Kind: pathStream, Want: authgate.Route{Op: domain.OpCreate, Resource: "/s"}},
	{Name: "append", Method: http.MethodPost, Target: "/s", Body: "x", Kind: pathStream, Want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{Name: "append and close", Method: http.MethodPost, Target: "/s", Body: "x", Headers: []string{headerClosed, "true"}, Kind: pathStream,
		Want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{Name: "close", Method: http.MethodPost, Target: "/s", Headers: []string{headerClosed, "true"}, Kind: pathStream,
		Want: authgate.Route{Op: domain.OpClose, Resource: "/s"}},
	{Name: "delete", Method: http.MethodDelete, Target: "/s", Kind: pathStream, Want: authgate.Route{Op: domain.OpDelete, Resource: "/s"}},
	{Name: "preflight", Method: http.MethodOptions, Target: "/s", Kind: pathStream, Preflight: true,
		Headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "PUT"}},

	{Name: "subscription get", Method: http.MethodGet, Target: "/v1/__ds/subscriptions/s1", Kind: pathControl, Want: readOf("/v1/")},
	{Name: "subscription head", Method: http.MethodHead, Target: "/v1/__ds/subscriptions/s1", Kind: pathControl, Want: readOf("/v1/")},
	{Name: "subscription put", Method: http.MethodPut, Target: "/v1/__ds/subscriptions/s1", Body: "{}", Kind: pathControl, Want: opOn(domain.OpCreate, "/v1/")},
	{Name: "subscription delete", Method: http.MethodDelete, Target: "/v1/__ds/subscriptions/s1", Kind: pathControl, Want: opOn(domain.OpDelete, "/v1/")},
	{Name: "subscription streams", Method: http.MethodPost, Target: "/v1/__ds/subscriptions/s1/streams", Body: "{}", Kind: pathControl, Want: opOn(domain.OpCreate, "/v1/")},
	{Name: "subscription stream removal", Method: http.MethodDelete, Target: "/v1/__ds/subscriptions/s1/streams/%2Fv1%2Fa", Kind: pathControl, Want: opOn(domain.OpDelete, "/v1/")},
	{Name: "subscription claim", Method: http.MethodPost, Target: "/v1/__ds/subscriptions/s1/claim", Body: "{}", Kind: pathControl, Want: readOf("/v1/")},
	{Name: "subscription of the root", Method: http.MethodGet, Target: "/__ds/subscriptions/s1", Kind: pathControl, Want: readOf("/")},
	{Name: "subscription with an escaped action", Method: http.MethodPost, Target: "/v1/__ds/subscriptions/s1/%63allback", Kind: pathControl, Want: readOf("/v1/")},
	{Name: "bare control prefix", Method: http.MethodGet, Target: "/v1/__ds", Kind: pathControl, Want: readOf("/v1/")},
	{Name: "signing keys", Method: http.MethodGet, Target: "/v1/__ds/jwks.json", Kind: pathControl, Want: publicRoute},
	{Name: "worker callback", Method: http.MethodPost, Target: "/v1/__ds/subscriptions/s1/callback", Body: "{}", Kind: pathControl, Want: publicRoute},
	{Name: "worker ack", Method: http.MethodPost, Target: "/v1/__ds/subscriptions/s1/ack", Body: "{}", Kind: pathControl, Want: publicRoute},
	{Name: "worker release", Method: http.MethodPost, Target: "/v1/__ds/subscriptions/s1/release", Body: "{}", Kind: pathControl, Want: publicRoute},
	{Name: "control preflight", Method: http.MethodOptions, Target: "/v1/__ds/subscriptions/s1", Kind: pathControl, Preflight: true,
		Headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "PUT"}},
}

// TestRouteCasesCoverEveryMethod: every method the listener answers has a
// case on each kind of path.
func TestRouteCasesCoverEveryMethod(t *testing.T) {
	handlertest.CheckRouteCoverage(t, routeCases, pathRoot, pathStream, pathControl)
}

// TestRouteOperations checks the operation route gives each case.
func TestRouteOperations(t *testing.T) {
	handlertest.CheckRouteOperations(t, routeCases, route)
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
			t.Run(fmt.Sprintf("%d/%s", refusal.status, rc.Name), func(t *testing.T) {
				auth := &handlertest.RecordingAuth{Err: refusal.err}
				h := newHarness(t, func(c *Config) { c.Auth = auth })
				rec := h.do(rc.Method, rc.Target, []byte(rc.Body), rc.Headers...)
				reqs := auth.Requests()
				switch {
				case rc.Preflight:
					if rec.Code != http.StatusNoContent || len(reqs) != 0 {
						t.Fatalf("preflight: %d after %d authorizations; want 204 without one", rec.Code, len(reqs))
					}
					return
				case rc.Want.Public:
					if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden || len(reqs) != 0 {
						t.Fatalf("public route: %d after %d authorizations; want neither 401 nor 403, and none", rec.Code, len(reqs))
					}
					return
				}
				handlertest.WantStatus(t, rec, refusal.status)
				if got, want := rec.Header().Get("WWW-Authenticate"), map[bool]string{true: `Bearer realm="pico"`}[refusal.status == 401]; got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
				if rc.Method != http.MethodHead {
					if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || rec.Body.Len() == 0 {
						t.Errorf("%q %q: want a plain-text message", ct, rec.Body)
					}
				}
				if len(reqs) != 1 {
					t.Fatalf("%d authorizations, want 1", len(reqs))
				}
				if r := reqs[0]; r.Op != rc.Want.Op || r.Audience != domain.AudienceDurableStreams || r.Resource != rc.Want.Resource {
					t.Errorf("asked %+v, want op %s at durable_streams on %q", r, rc.Want.Op, rc.Want.Resource)
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
		if rc.Preflight || rc.Want.Public {
			continue
		}
		before := auth.Holds()
		h.do(rc.Method, rc.Target, []byte(rc.Body), rc.Headers...)
		if held := auth.Holds() - before; held != map[bool]int{true: 1}[rc.Want.Live] {
			t.Errorf("%s: held %d times, want live=%v", rc.Name, held, rc.Want.Live)
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
