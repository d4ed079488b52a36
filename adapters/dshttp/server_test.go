package dshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/ports"
)

// TestEveryResponseHasCommonHeaders covers successes, errors, preflights
// and live reads, asked by a browser (with Origin).
func TestEveryResponseHasCommonHeaders(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	for _, req := range []struct{ method, target string }{
		{"PUT", "/s2"}, {"POST", "/s"}, {"GET", "/s"}, {"GET", "/s?offset=now"}, {"HEAD", "/s"},
		{"GET", "/s?offset=-1&live=long-poll"}, {"GET", "/missing"}, {"HEAD", "/missing"}, {"GET", "/s?offset=bad"},
		{"OPTIONS", "/s"}, {"PATCH", "/s"}, {"DELETE", "/nope"}, {"GET", "/v1/stream/__ds/jwks.json"},
	} {
		var body []byte
		if req.method == "POST" {
			body = []byte("x")
		}
		rec := h.do(req.method, req.target, body, "Content-Type", "text/plain", "Origin", "https://app.example")
		for name, want := range map[string]string{
			"X-Content-Type-Options":        "nosniff",
			"Cross-Origin-Resource-Policy":  "cross-origin",
			"Access-Control-Allow-Origin":   "*",
			"Access-Control-Expose-Headers": exposedHeaders,
		} {
			if got := rec.Header().Get(name); got != want {
				t.Errorf("%s %s (%d): %s = %q, want %q", req.method, req.target, rec.Code, name, got, want)
			}
		}
	}
}

// TestWritesWithoutOriginSkipCrossOriginHeaders: a write without Origin
// does not come from a browser, so its answer carries nosniff alone; reads
// and preflights carry everything either way, since a cache may hand them
// to a browser.
func TestWritesWithoutOriginSkipCrossOriginHeaders(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	crossOrigin := []string{"Cross-Origin-Resource-Policy", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"}
	for _, req := range []struct {
		method, target string
		browser        bool
	}{
		{"PUT", "/s2", false}, {"POST", "/s", false}, {"DELETE", "/s2", false}, {"PATCH", "/s", false},
		{"POST", "/missing", false}, {"GET", "/s", true}, {"HEAD", "/s", true}, {"GET", "/missing", true}, {"OPTIONS", "/s", true},
	} {
		rec := h.do(req.method, req.target, []byte("x"), "Content-Type", "text/plain")
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options = %q", req.method, req.target, rec.Code, got)
		}
		for _, name := range crossOrigin {
			if got := rec.Header().Get(name) != ""; got != req.browser {
				t.Errorf("%s %s (%d): has %s = %v, want %v", req.method, req.target, rec.Code, name, got, req.browser)
			}
		}
	}
}

func TestPreflight(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodOptions, "/v1/stream/any", nil, "Access-Control-Request-Method", "GET",
		"Access-Control-Request-Headers", "if-none-match")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec,
		"Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, HEAD, OPTIONS",
		"Access-Control-Allow-Headers", "Content-Type, Authorization, Stream-Seq, Stream-TTL, Stream-Expires-At, "+
			"Stream-Closed, If-None-Match, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Forked-From, "+
			"Stream-Fork-Offset, Stream-Fork-Sub-Offset, Stream-Schema, Stream-Schema-Validate",
		"Access-Control-Allow-Origin", "*")
	for _, name := range []string{"Stream-Next-Offset", "Stream-Cursor", "Stream-Up-To-Date", "Stream-Closed", "ETag",
		"Location", "Producer-Epoch", "Producer-Seq", "Producer-Expected-Seq", "Producer-Received-Seq", "Stream-SSE-Data-Encoding"} {
		if !strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), name) {
			t.Errorf("%s is not exposed", name)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := newHarness(t)
	rec := h.do("PATCH", "/s", nil)
	wantError(t, rec, http.StatusMethodNotAllowed, "method not allowed")
	handlertest.WantHeaders(t, rec, "Allow", allowedMethods)
}

func TestSubscriptionPathsAreReserved(t *testing.T) {
	h := newHarness(t)
	for _, method := range []string{"GET", "PUT", "POST", "DELETE"} {
		rec := h.do(method, "/v1/stream/__ds/subscriptions/x", []byte("{}"), "Content-Type", "application/json")
		handlertest.WantStatus(t, rec, http.StatusNotFound)
		var body struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != "SUBSCRIPTION_NOT_FOUND" || body.Error.Message == "" {
			t.Errorf("%s: body %q (%v)", method, rec.Body, err)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", method, ct)
		}
	}
	if h.fake.Len() != 0 {
		t.Error("a reserved path became a stream")
	}
}

// TestAnyPathIsAStream: names are the escaped path as sent.
func TestAnyPathIsAStream(t *testing.T) {
	h := newHarness(t)
	for _, name := range []string{"/", "/a", "/v1/stream/x", "/a%2Fb", "/a/b", "/%E2%9C%93"} {
		h.create(name)
	}
	if h.fake.Len() != 6 {
		t.Errorf("%d streams, want 6", h.fake.Len())
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/"+strings.Repeat("x", maxNameBytes), nil), http.StatusBadRequest)
}

// TestTargetOutsideRouter: an absolute-form target without a path names
// the stream "/", like the root path.
func TestTargetOutsideRouter(t *testing.T) {
	h := newHarness(t)
	h.create("/", "Content-Type", "text/plain")
	h.appendBodies("/", "text/plain", "root")
	rec := h.do(http.MethodGet, "http://ds.test", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "X-Content-Type-Options", "nosniff", "Stream-Up-To-Date", "true")
	if rec.Body.String() != "root" {
		t.Errorf("body %q", rec.Body)
	}
}

func TestRedirectsToTheOwner(t *testing.T) {
	h := newHarness(t)
	h.fake.SetOwner("/s", "http://other:4437/")
	for _, method := range []string{"GET", "HEAD", "POST", "DELETE"} {
		rec := h.do(method, "/s?offset=-1&live=sse", nil)
		handlertest.WantStatus(t, rec, http.StatusTemporaryRedirect)
		handlertest.WantHeaders(t, rec, "Location", "http://other:4437/s?offset=-1&live=sse", "Cache-Control", "no-store")
	}
	// A create is placed by the service, which redirects in its answer.
	h.fake.SetFailure(&ports.RedirectError{Address: "http://other:4437"})
	rec := h.do(http.MethodPut, "/s", nil)
	handlertest.WantStatus(t, rec, http.StatusTemporaryRedirect)
	handlertest.WantHeaders(t, rec, "Location", "http://other:4437/s")
}

func TestLocalRoutingNeverAsks(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Routing = "local" })
	h.fake.SetOwner("/s", "http://other:4437")
	h.fake.SetRouteError(errors.New("no route"))
	h.create("/s")
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s", nil), http.StatusOK)
}

func TestRouteFailureIs503(t *testing.T) {
	h := newHarness(t)
	h.fake.SetRouteError(errors.New("metadata unavailable"))
	wantError(t, h.do(http.MethodGet, "/s", nil), http.StatusServiceUnavailable, "owner")
}

func TestServiceErrorsMapToStatuses(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
	}{
		{ports.Errorf(ports.ErrUnavailable, "shutting down"), http.StatusServiceUnavailable},
		{ports.ErrStreamGone, http.StatusGone},
		{ports.ErrBadRequest, http.StatusBadRequest},
		{&ports.RedirectError{}, http.StatusServiceUnavailable},
		{errors.New("disk on fire"), http.StatusInternalServerError},
		{&ports.StreamError{Kind: errors.New("unknown kind")}, http.StatusInternalServerError},
	} {
		h := newHarness(t)
		h.fake.SetFailure(tc.err)
		rec := h.do(http.MethodGet, "/s", nil)
		handlertest.WantStatus(t, rec, tc.status)
		if tc.status == http.StatusInternalServerError && strings.Contains(rec.Body.String(), "fire") {
			t.Errorf("internal error leaked: %q", rec.Body)
		}
		handlertest.WantHeaders(t, rec, "Cache-Control", "no-store")
		if retry := rec.Header().Get("Retry-After"); (retry == "1") != (tc.status == http.StatusServiceUnavailable) {
			t.Errorf("%v: %d with Retry-After %q; want 1 exactly on 503", tc.err, tc.status, retry)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no streams":  {},
		"bad routing": {Streams: newFakeStreams(), Routing: "sideways"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			New(cfg)
		}()
	}
	s := newServer(Config{Streams: newFakeStreams()})
	if s.cfg.LongPollTimeout != defaultLongPollTimeout || s.cfg.SSEMaxDuration != defaultSSEMaxDuration ||
		s.cfg.MaxBodyBytes != defaultMaxBodyBytes || s.cfg.MaxChunkBytes != defaultMaxChunkBytes || s.cfg.Now == nil || !s.redirect {
		t.Errorf("defaults %+v", s.cfg)
	}
}
