package picohttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func TestEveryResponseCarriesCommonHeaders(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	for _, req := range []struct{ method, target string }{
		{"GET", "/s"}, {"GET", "/missing"}, {"HEAD", "/s"}, {"OPTIONS", "/x"}, {"PATCH", "/s"},
		{"FOO", "/s"}, {"GET", "/"}, {"PUT", "/"}, {"DELETE", "/missing"},
	} {
		rec := h.do(req.method, req.target, nil, "Origin", "https://app.example")
		handlertest.WantHeaders(t, rec, "X-Content-Type-Options", "nosniff", "Access-Control-Allow-Origin", "*")
		exposed := rec.Header().Get("Access-Control-Expose-Headers")
		for _, name := range []string{"Pico-Next-Seq", "Pico-Cursor", "ETag", "Location", "Pico-Producer-Epoch"} {
			if !strings.Contains(exposed, name) {
				t.Errorf("%s %s: Expose-Headers %q lacks %s", req.method, req.target, exposed, name)
			}
		}
	}
}

func TestPreflight(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodOptions, "/any/path?x=1", nil)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Access-Control-Allow-Methods", "GET, PUT, POST, DELETE, HEAD, OPTIONS, PATCH",
		"Cache-Control", "no-store", "Access-Control-Max-Age", "86400")
	allowed := rec.Header().Get("Access-Control-Allow-Headers")
	for _, name := range []string{"Content-Type", "If-None-Match", "Last-Event-ID", "Authorization", "Pico-TTL",
		"Pico-Expires-At", "Pico-Closed", "Pico-Match-Seq", "Pico-Trim-Seq", "Pico-Producer-Id", "Pico-Producer-Epoch", "Pico-Producer-Seq"} {
		if !strings.Contains(allowed, name) {
			t.Errorf("Allow-Headers %q lacks %s", allowed, name)
		}
	}
	if rec.Body.Len() != 0 {
		t.Errorf("preflight body %q", rec.Body)
	}
}

func TestOtherMethodsAre405(t *testing.T) {
	h := newHarness(t)
	for _, m := range []string{"PATCH", "TRACE", "CONNECT", "PROPFIND", "BREW"} {
		rec := h.do(m, "/s", nil)
		wantError(t, rec, http.StatusMethodNotAllowed, "method_not_allowed", "GET")
		handlertest.WantHeaders(t, rec, "Allow", "GET, PUT, POST, DELETE, HEAD, OPTIONS, PATCH")
	}
}

func TestRootIsTheListingNotAStream(t *testing.T) {
	h := newHarness(t)
	for _, m := range []string{"PUT", "POST", "DELETE"} {
		wantError(t, h.do(m, "/", []byte("x")), http.StatusBadRequest, "bad_request", "listing")
	}
}

func TestLongNamesAre400(t *testing.T) {
	h := newHarness(t)
	name := "/" + strings.Repeat("a", 1023)
	handlertest.WantStatus(t, h.do(http.MethodPut, name, nil), http.StatusCreated)
	wantError(t, h.do(http.MethodPut, name+"b", nil), http.StatusBadRequest, "bad_request", "1025 bytes")
}

func TestNameIsTheEscapedPath(t *testing.T) {
	h := newHarness(t)
	h.create("/a%2Fb")
	handlertest.WantStatus(t, h.do(http.MethodHead, "/a%2Fb", nil), http.StatusOK)
	handlertest.WantStatus(t, h.do(http.MethodHead, "/a/b", nil), http.StatusNotFound)
}

func TestRedirectToOwner(t *testing.T) {
	h := newHarness(t)
	h.fake.SetOwner("/s/x", "http://node-2:4437/")
	for _, tc := range []struct{ method, target, location string }{
		{"GET", "/s/x?seq=5&live=sse", "http://node-2:4437/s/x?seq=5&live=sse"},
		{"POST", "/s/x", "http://node-2:4437/s/x"},
		{"HEAD", "/s/x", "http://node-2:4437/s/x"},
		{"DELETE", "/s/x", "http://node-2:4437/s/x"},
	} {
		rec := h.do(tc.method, tc.target, []byte("body"), "Origin", "https://app.example")
		handlertest.WantStatus(t, rec, http.StatusTemporaryRedirect)
		handlertest.WantHeaders(t, rec, "Location", tc.location, "Cache-Control", "no-store", "Access-Control-Allow-Origin", "*")
	}
	// PUT, OPTIONS and the listing are always served here.
	handlertest.WantStatus(t, h.do(http.MethodPut, "/s/x", nil), http.StatusCreated)
	handlertest.WantStatus(t, h.do(http.MethodOptions, "/s/x", nil), http.StatusNoContent)
	h.fake.SetOwner("/", "http://node-2:4437")
	handlertest.WantStatus(t, h.do(http.MethodGet, "/?prefix=/s", nil), http.StatusOK)
}

func TestRedirectKeepsEscapedPath(t *testing.T) {
	h := newHarness(t)
	h.fake.SetOwner("/a%20b", "http://n2")
	rec := h.do(http.MethodGet, "/a%20b?format=raw", nil)
	handlertest.WantHeaders(t, rec, "Location", "http://n2/a%20b?format=raw")
}

func TestLocalRoutingNeverRedirects(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Routing = "local" })
	h.create("/s")
	h.fake.SetOwner("/s", "http://node-2")
	handlertest.WantStatus(t, h.do(http.MethodHead, "/s", nil), http.StatusOK)
}

func TestRouteFailureIs503(t *testing.T) {
	h := newHarness(t)
	h.fake.SetRouteError(errors.New("metadata view is stale"))
	wantError(t, h.do(http.MethodGet, "/s", nil), http.StatusServiceUnavailable, "unavailable", "metadata view is stale")
}

func TestRedirectErrorFromServiceIs307(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Routing = "local" })
	h.fake.SetFailure(&ports.RedirectError{Address: "http://owner:1"})
	rec := h.do(http.MethodPost, "/s?x=y", []byte("a"))
	handlertest.WantStatus(t, rec, http.StatusTemporaryRedirect)
	handlertest.WantHeaders(t, rec, "Location", "http://owner:1/s?x=y", "Cache-Control", "no-store")
}

func TestServiceErrorsMapToStatusAndCode(t *testing.T) {
	withNext := func(kind error, closed bool) error {
		e := ports.Errorf(kind, "detail of %v", kind)
		e.Next, e.HasNext, e.Closed = 7, true, closed
		return e
	}
	fenced := ports.Errorf(ports.ErrProducerFenced, "producer epoch 1 is stale")
	fenced.Write = &domain.Verdict{Outcome: domain.StaleEpoch, Epoch: 3}
	gap := ports.Errorf(ports.ErrProducerGap, "gap")
	gap.Write = &domain.Verdict{Outcome: domain.ProducerGap, Expected: 4, Received: 9}
	for _, tc := range []struct {
		err     error
		status  int
		code    string
		headers []string
	}{
		{ports.ErrStreamNotFound, 404, "not_found", nil},
		{ports.Errorf(ports.ErrBadRequest, "bad offset"), 400, "bad_request", nil},
		{withNext(ports.ErrStreamConflict, false), 409, "conflict", []string{"Pico-Next-Seq", "7", "Pico-Closed", ""}},
		{withNext(ports.ErrStreamClosed, true), 409, "closed", []string{"Pico-Next-Seq", "7", "Pico-Closed", "true"}},
		{withNext(ports.ErrMatchFailed, false), 412, "match_failed", []string{"Pico-Next-Seq", "7"}},
		{fenced, 403, "fenced", []string{"Pico-Producer-Epoch", "3"}},
		{gap, 409, "sequence_gap", []string{"Pico-Expected-Seq", "4", "Pico-Received-Seq", "9"}},
		{ports.ErrUnavailable, 503, "unavailable", []string{"Retry-After", "1"}},
		{context.Canceled, 503, "unavailable", []string{"Retry-After", "1"}},
		{errors.New("disk on fire"), 500, "internal", nil},
		{&ports.StreamError{Kind: errors.New("odd")}, 500, "internal", nil},
	} {
		h := newHarness(t)
		h.fake.SetFailure(tc.err)
		rec := h.do(http.MethodGet, "/s", nil)
		body := wantError(t, rec, tc.status, tc.code, "")
		handlertest.WantHeaders(t, rec, tc.headers...)
		if tc.code == "internal" && body.Message != "internal error" {
			t.Errorf("internal message leaks %q", body.Message)
		}
		var se *ports.StreamError
		if errors.As(tc.err, &se) && se.HasNext && (body.NextSeq == nil || *body.NextSeq != 7) {
			t.Errorf("%s: next_seq %v, want 7", tc.code, body.NextSeq)
		}
		if errors.As(tc.err, &se) && !se.HasNext && body.NextSeq != nil {
			t.Errorf("%s: next_seq %v, want absent", tc.code, *body.NextSeq)
		}
	}
}

func TestHeadErrorsHaveNoBody(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodHead, "/missing", nil)
	handlertest.WantStatus(t, rec, http.StatusNotFound)
	if rec.Body.Len() != 0 {
		t.Errorf("HEAD 404 body %q", rec.Body)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no streams":  {},
		"bad routing": {Streams: newFakeStreams(), Routing: "proxy"},
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
	for _, r := range []string{"", "redirect", "local"} {
		New(Config{Streams: newFakeStreams(), Routing: r})
	}
}

// TestTargetsThatAreNotPaths: an absolute URL without a path is the
// listing; "*" is no stream name.
func TestTargetsThatAreNotPaths(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		method string
		url    *url.URL
		status int
	}{
		{"GET", &url.URL{Scheme: "http", Host: "h"}, http.StatusOK},
		{"OPTIONS", &url.URL{Scheme: "http", Host: "h"}, http.StatusNoContent},
		{"OPTIONS", &url.URL{Path: "*"}, http.StatusNoContent},
		{"PUT", &url.URL{Path: "*"}, http.StatusBadRequest},
		{"BREW", &url.URL{Path: "*"}, http.StatusMethodNotAllowed},
	} {
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, &http.Request{Method: tc.method, URL: tc.url, Header: http.Header{"Origin": {"https://app.example"}}, Body: http.NoBody})
		handlertest.WantStatus(t, rec, tc.status)
		handlertest.WantHeaders(t, rec, "Access-Control-Allow-Origin", "*")
	}
}
