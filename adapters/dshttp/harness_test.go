package dshttp

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

// harness drives the handler with the fake service.
type harness struct {
	t    *testing.T
	fake *fakeStreams
	srv  *server
	h    http.Handler
}

func newHarness(t *testing.T, configure ...func(*Config)) *harness {
	t.Helper()
	fake := newFakeStreams()
	cfg := Config{Streams: fake, LongPollTimeout: 50 * time.Millisecond, SSEMaxDuration: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)}
	for _, f := range configure {
		f(&cfg)
	}
	srv := newServer(cfg)
	return &harness{t: t, fake: fake, srv: srv, h: srv.handler()}
}

// do sends one request; headers alternate names and values.
func (h *harness) do(method, target string, body []byte, headers ...string) *httptest.ResponseRecorder {
	return handlertest.Do(h.h, method, target, body, headers...)
}

// create makes a stream and fails the test unless it was created.
func (h *harness) create(name string, headers ...string) {
	h.t.Helper()
	if rec := h.do(http.MethodPut, name, nil, headers...); rec.Code != http.StatusCreated {
		h.t.Fatalf("PUT %s: %d %s", name, rec.Code, rec.Body)
	}
}

// appendBodies appends each body with the given content type.
func (h *harness) appendBodies(name, contentType string, bodies ...string) {
	h.t.Helper()
	for _, b := range bodies {
		if rec := h.do(http.MethodPost, name, []byte(b), "Content-Type", contentType); rec.Code != http.StatusNoContent {
			h.t.Fatalf("POST %s: %d %s", name, rec.Code, rec.Body)
		}
	}
}

// closeStream closes a stream with a close-only POST.
func (h *harness) closeStream(name string) {
	h.t.Helper()
	if rec := h.do(http.MethodPost, name, nil, "Stream-Closed", "true"); rec.Code != http.StatusNoContent {
		h.t.Fatalf("close %s: %d %s", name, rec.Code, rec.Body)
	}
}

// wantError checks a plain-text error response.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, messagePart string) {
	t.Helper()
	handlertest.WantStatus(t, rec, status)
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("error Content-Type %q", ct)
	}
	if !strings.Contains(rec.Body.String(), messagePart) {
		t.Errorf("error body %q does not contain %q", rec.Body, messagePart)
	}
}

// off is the offset before record n, for expected headers.
func off(n uint64) string { return formatOffset(n) }
