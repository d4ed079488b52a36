package picohttp

import (
	"encoding/json"
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

// routeCase is one request shape of the listener and what the gate must
// ask of it.
type routeCase struct {
	name, method, target string
	headers              []string
	body                 string
	listing              bool // the target is the listing path, not a stream
	preflight            bool // answered before the gate
	want                 authgate.Route
}

// routeCases are the listener's request shapes: every method of
// streamroute.Methods on the listing path and on a stream path, with the
// operation each is. TestRouteCasesCoverEveryMethod fails when a method
// has none: a new method needs an entry in route (routes.go), here, and a
// sample request in the end-to-end matrix (tests/e2e/auth_matrix_test.go).
var routeCases = []routeCase{
	{name: "list", method: http.MethodGet, target: "/", listing: true, want: authgate.Route{Op: domain.OpList}},
	{name: "list with a query", method: http.MethodGet, target: "/?prefix=/a&limit=2", listing: true, want: authgate.Route{Op: domain.OpList}},
	{name: "list (HEAD)", method: http.MethodHead, target: "/", listing: true, want: authgate.Route{Op: domain.OpList}},
	{name: "PUT on the listing", method: http.MethodPut, target: "/", listing: true, want: authgate.Route{Op: domain.OpList}},
	{name: "POST on the listing", method: http.MethodPost, target: "/", body: "x", listing: true, want: authgate.Route{Op: domain.OpList}},
	{name: "DELETE on the listing", method: http.MethodDelete, target: "/", listing: true, want: authgate.Route{Op: domain.OpList}},
	{name: "preflight on the listing", method: http.MethodOptions, target: "/", listing: true, preflight: true,
		headers: []string{"Origin", "http://app", "Access-Control-Request-Method", "GET"}},

	{name: "read", method: http.MethodGet, target: "/s?seq=0", want: authgate.Route{Op: domain.OpRead, Resource: "/s"}},
	{name: "read of an escaped name", method: http.MethodGet, target: "/a/b%20c", want: authgate.Route{Op: domain.OpRead, Resource: "/a/b%20c"}},
	{name: "live read (long-poll)", method: http.MethodGet, target: "/s?seq=0&live=long-poll", want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{name: "live read (SSE)", method: http.MethodGet, target: "/s?live=sse&seq=0", want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	// The read takes its live mode from the decoded query, so the gate must
	// too: an escaped key is the same parameter.
	{name: "live read (escaped key)", method: http.MethodGet, target: "/s?seq=0&liv%65=sse", want: authgate.Route{Op: domain.OpRead, Resource: "/s", Live: true}},
	{name: "head", method: http.MethodHead, target: "/s", want: authgate.Route{Op: domain.OpHead, Resource: "/s"}},
	{name: "create", method: http.MethodPut, target: "/s", want: authgate.Route{Op: domain.OpCreate, Resource: "/s"}},
	{name: "append", method: http.MethodPost, target: "/s", body: "x", want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{name: "append and close", method: http.MethodPost, target: "/s", body: "x", headers: []string{headerClosed, "true"},
		want: authgate.Route{Op: domain.OpAppend, Resource: "/s"}},
	{name: "trim", method: http.MethodPost, target: "/s", headers: []string{headerTrimSeq, "1"}, want: authgate.Route{Op: domain.OpTrim, Resource: "/s"}},
	{name: "close", method: http.MethodPost, target: "/s", headers: []string{headerClosed, "true"}, want: authgate.Route{Op: domain.OpClose, Resource: "/s"}},
	{name: "delete", method: http.MethodDelete, target: "/s", want: authgate.Route{Op: domain.OpDelete, Resource: "/s"}},
	{name: "preflight", method: http.MethodOptions, target: "/s", preflight: true,
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
// case on the listing path and on a stream path.
func TestRouteCasesCoverEveryMethod(t *testing.T) {
	for _, m := range streamroute.Methods {
		for _, listing := range []bool{true, false} {
			found := false
			for _, rc := range routeCases {
				found = found || rc.method == m && rc.listing == listing
			}
			if !found {
				t.Errorf("%s on a %s has no route case: give it an operation in route (routes.go), a case here and a sample in tests/e2e/auth_matrix_test.go",
					m, map[bool]string{true: "listing path", false: "stream path"}[listing])
			}
		}
	}
	for _, rc := range routeCases {
		if !rc.preflight && rc.want.Public {
			t.Errorf("%s: the Pico listener has no public route but preflights", rc.name)
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
			t.Run(fmt.Sprintf("%d/%s", refusal.status, rc.name), func(t *testing.T) {
				auth := &handlertest.RecordingAuth{Err: refusal.err}
				h := newHarness(t, func(c *Config) { c.Auth = auth })
				rec := h.do(rc.method, rc.target, []byte(rc.body), rc.headers...)
				if rc.preflight {
					if rec.Code != http.StatusNoContent || len(auth.Requests()) != 0 {
						t.Fatalf("preflight: %d after %d authorizations; want 204 without one", rec.Code, len(auth.Requests()))
					}
					return
				}
				handlertest.WantStatus(t, rec, refusal.status)
				if got, want := rec.Header().Get("WWW-Authenticate"), map[bool]string{true: `Bearer realm="pico"`}[refusal.status == 401]; got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
				if rc.method != http.MethodHead {
					var body errorBody
					if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error != refusal.code || body.Message == "" {
						t.Errorf("body %q (%v), want the error JSON with code %q", rec.Body, err, refusal.code)
					}
				}
				reqs := auth.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d authorizations, want 1", len(reqs))
				}
				if r := reqs[0]; r.Op != rc.want.Op || r.Audience != domain.AudiencePico || r.Resource != rc.want.Resource {
					t.Errorf("asked %+v, want op %s at pico on %q", r, rc.want.Op, rc.want.Resource)
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
		if rc.preflight {
			continue
		}
		before := auth.Holds()
		h.do(rc.method, rc.target, []byte(rc.body), rc.headers...)
		if held := auth.Holds() - before; held != map[bool]int{true: 1}[rc.want.Live] {
			t.Errorf("%s: held %d times, want live=%v", rc.name, held, rc.want.Live)
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
