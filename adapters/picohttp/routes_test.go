package picohttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// routeCase is one request shape of the listener and what the gate must
// ask of it.
// routeCases are the listener's request shapes: every method of
// streamroute.Methods on the listing path and on a stream path, with the
// operation each is. TestRouteCasesCoverEveryMethod fails when a method
// has none: a new method needs an entry in route (routes.go), here, and a
// sample request in the end-to-end matrix (tests/e2e/auth_matrix_test.go).
var routeCases = []handlertest.RouteCase{
	{Name: "list", Method: http.MethodGet, Target: "/", Kind: listingPath, Want: authgate.Route{Op: domain.OpList}},
	{Name: "list with a query", Method: http.MethodGet, Target: "/?prefix=/a&limit=2", Kind: listingPath, Want: authgate.Route{Op: domain.OpList}},
	{Name: "list (HEAD)", Method: http.MethodHead, Target: "/", Kind: listingPath, Want: authgate.Route{Op: domain.OpList}},
	{Name: "PUT on the listing", Method: http.MethodPut, Target: "/", Kind: listingPath, Want: authgate.Route{Op: domain.OpList}},
	{Name: "POST on the listing", Method: http.MethodPost, Target: "/", Body: "x", Kind: listingPath, Want: authgate.Route{Op: domain.OpList}},
	{Name: "DELETE on the listing", Method: http.MethodDelete, Target: "/", Kind: listingPath, Want: authgate.Route{Op: domain.OpList}},
	{Name: "preflight on the listing", Method: http.MethodOptions, Target: "/", Kind: listingPath, Preflight: true,
		Headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "GET"}},

	{Kind: streamPath, Name: "read", Method: http.MethodGet, Target: "/s?seq=0", Want: authgate.Route{Op: domain.OpRead, Resource: "/s"}},
	{Kind: streamPath, Name: "read of an escaped name", Method: http.MethodGet, Target: "/a/b%20c", Want: authgate.Route{Op: domain.OpRead, Resource: "/a/b%20c"}},
	{Kind: streamPath, Name: "live read (long-poll)", Method: http.MethodGet, Target: "/s?seq=0&live=long-poll", Want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{Kind: streamPath, Name: "live read (SSE)", Method: http.MethodGet, Target: "/s?live=sse&seq=0", Want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	// The read takes its live mode from the decoded query, so the gate must
	// too: an escaped key is the same parameter.
	{Kind: streamPath, Name: "live read (escaped key)", Method: http.MethodGet, Target: "/s?seq=0&liv%65=sse", Want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{Kind: streamPath, Name: "head", Method: http.MethodHead, Target: "/s", Want: authgate.Route{Op: domain.OpHead, Resource: "/s"}},
	{Kind: streamPath, Name: "create", Method: http.MethodPut, Target: "/s", Want: authgate.Route{Op: domain.OpCreate, Resource: "/s"}},
	{Kind: streamPath, Name: "append", Method: http.MethodPost, Target: "/s", Body: "x", Want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{Kind: streamPath, Name: "append and close", Method: http.MethodPost, Target: "/s", Body: "x", Headers: []string{headerClosed, "true"},
		Want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{Kind: streamPath, Name: "trim", Method: http.MethodPost, Target: "/s", Headers: []string{headerTrimSeq, "1"}, Want: authgate.Route{Op: domain.OpTrim, Resource: "/s"}},
	{Kind: streamPath, Name: "close", Method: http.MethodPost, Target: "/s", Headers: []string{headerClosed, "true"}, Want: authgate.Route{Op: domain.OpClose, Resource: "/s"}},
	{Kind: streamPath, Name: "delete", Method: http.MethodDelete, Target: "/s", Want: authgate.Route{Op: domain.OpDelete, Resource: "/s"}},
	{Kind: streamPath, Name: "preflight", Method: http.MethodOptions, Target: "/s", Preflight: true,
		Headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "PUT"}},

	// A group request reads (its handler then checks every stream it
	// names); a listing or a description inspects.
	{Kind: groupRoutes, Name: "list groups", Method: http.MethodGet, Target: "/_groups", Want: authgate.Route{Op: domain.OpStreamInspect}},
	{Kind: groupRoutes, Name: "describe a group", Method: http.MethodGet, Target: "/_groups/g", Want: authgate.Route{Op: domain.OpStreamInspect}},
	{Kind: groupRoutes, Name: "join", Method: http.MethodPost, Target: "/_groups/g/members", Body: "{}", Want: authgate.Route{Op: domain.OpRead}},
	{Kind: groupRoutes, Name: "heartbeat", Method: http.MethodPost, Target: "/_groups/g/members/m/heartbeat", Body: "{}", Want: authgate.Route{Op: domain.OpRead}},
	{Kind: groupRoutes, Name: "commit", Method: http.MethodPut, Target: "/_groups/g/offsets", Body: "{}", Want: authgate.Route{Op: domain.OpRead}},
	{Kind: groupRoutes, Name: "leave", Method: http.MethodDelete, Target: "/_groups/g/members/m", Want: authgate.Route{Op: domain.OpRead}},
}

// The kinds of path the Pico listener tells apart.
const (
	listingPath = "the listing path"
	streamPath  = "a stream path"
	groupRoutes = "a path under /_groups"
)

// TestRouteCasesCoverEveryMethod: every method the listener answers has a
// case on the listing path and on a stream path.
func TestRouteCasesCoverEveryMethod(t *testing.T) {
	handlertest.CheckRouteCoverage(t, routeCases, listingPath, streamPath)
	for _, rc := range routeCases {
		if !rc.Preflight && rc.Want.Public {
			t.Errorf("%s: the Pico listener has no public route but preflights", rc.Name)
		}
	}
}

// TestRouteOperations checks the operation route gives each case.
func TestRouteOperations(t *testing.T) {
	handlertest.CheckRouteOperations(t, routeCases, route)
}

// TestGateDecidesEveryRoute sends every case through the handler with an
// authorizer that refuses: each is refused with the listener's error JSON
// before anything else, having asked the operation of the case, and only
// preflights pass without asking.
func TestGateDecidesEveryRoute(t *testing.T) {
	for _, refusal := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("%w: no valid credential", ports.ErrUnauthenticated), http.StatusUnauthorized, codeUnauthorized},
		{fmt.Errorf("%w: not allowed", ports.ErrForbidden), http.StatusForbidden, codeForbidden},
	} {
		for _, rc := range routeCases {
			t.Run(fmt.Sprintf("%d/%s", refusal.status, rc.Name), func(t *testing.T) {
				auth := &handlertest.RecordingAuth{Err: refusal.err}
				h := newHarness(t, func(c *Config) { c.Auth = auth })
				rec := h.do(rc.Method, rc.Target, []byte(rc.Body), rc.Headers...)
				if rc.Preflight {
					if rec.Code != http.StatusNoContent || len(auth.Requests()) != 0 {
						t.Fatalf("preflight: %d after %d authorizations; want 204 without one", rec.Code, len(auth.Requests()))
					}
					return
				}
				handlertest.WantStatus(t, rec, refusal.status)
				if got, want := rec.Header().Get("WWW-Authenticate"), map[bool]string{true: `Bearer realm="pico"`}[refusal.status == 401]; got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
				if rc.Method != http.MethodHead {
					var body errorBody
					if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error != refusal.code || body.Message == "" {
						t.Errorf("body %q (%v), want the error JSON with code %q", rec.Body, err, refusal.code)
					}
				}
				reqs := auth.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d authorizations, want 1", len(reqs))
				}
				if r := reqs[0]; r.Op != rc.Want.Op || r.Audience != domain.AudiencePico || r.Resource != rc.Want.Resource {
					t.Errorf("asked %+v, want op %s at pico on %q", r, rc.Want.Op, rc.Want.Resource)
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
	h.create("/s")
	for _, rc := range routeCases {
		if rc.Preflight {
			continue
		}
		before := auth.Holds()
		h.do(rc.Method, rc.Target, []byte(rc.Body), rc.Headers...)
		if held := auth.Holds() - before; held != map[bool]int{true: 1}[rc.Want.Live] {
			t.Errorf("%s: held %d times, want live=%v", rc.Name, held, rc.Want.Live)
		}
	}
	h.create("/held") // the cases deleted /s
	start := time.Now()
	rec := h.do(http.MethodGet, "/held?seq=0&live=long-poll", nil)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the long-poll answered %v after its hold ended", took)
	}
	handlertest.WantStatus(t, rec, http.StatusUnauthorized)
}
