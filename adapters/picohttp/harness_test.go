package picohttp

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/picowire"
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

// appendBodies appends each body as one record.
func (h *harness) appendBodies(name string, bodies ...string) {
	h.t.Helper()
	for _, b := range bodies {
		if rec := h.do(http.MethodPost, name, []byte(b)); rec.Code != http.StatusOK {
			h.t.Fatalf("POST %s: %d %s", name, rec.Code, rec.Body)
		}
	}
}

// wantError checks a JSON error response.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, code, messagePart string) errorBody {
	t.Helper()
	handlertest.WantStatus(t, rec, status)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type %q", ct)
	}
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body %q: %v", rec.Body, err)
	}
	if body.Error != code {
		t.Errorf("error code %q, want %q (message %q)", body.Error, code, body.Message)
	}
	if !strings.Contains(body.Message, messagePart) {
		t.Errorf("error message %q does not contain %q", body.Message, messagePart)
	}
	return body
}

// jsonPage decodes a format=json read.
func jsonPage(t *testing.T, rec *httptest.ResponseRecorder) []picowire.SeqRecord {
	t.Helper()
	recs, err := picowire.DecodeJSONRecords(rec.Body.Bytes(), batchLimits)
	if err != nil {
		t.Fatalf("json page %q: %v", rec.Body, err)
	}
	return recs
}

func bodiesOf(recs []picowire.SeqRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Body)
	}
	return out
}
