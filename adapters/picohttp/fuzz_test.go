package picohttp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/cors"
	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// FuzzHandler sends arbitrary requests to the handler backed by the fake
// (which never fails): no panic, no 5xx but 503, and every response is
// well formed.
func FuzzHandler(f *testing.F) {
	fake := newFakeStreams()
	fake.SetOwner("/remote", "http://other:4437/")
	srv := newServer(Config{Streams: fake, LongPollTimeout: 50 * time.Microsecond, SSEMaxDuration: 200 * time.Microsecond,
		MaxBodyBytes: 1 << 16, MaxChunkBytes: 16, Logger: slog.New(slog.DiscardHandler)})
	handler := srv.handler()

	batch := picowire.EncodeBatch([]domain.Record{{Body: []byte("x"), Headers: []domain.Header{{Key: "a", Value: "b"}}}})
	for _, seed := range []struct {
		method, target, headers string
		body                    []byte
	}{
		{"GET", "/s", "", nil},
		{"GET", "/s?seq=1&count=1&bytes=3&format=binary", "If-None-Match: *", nil},
		{"GET", "/s?seq=now&live=long-poll", "", nil},
		{"GET", "/s?live=sse&format=raw", "Last-Event-ID: 0", nil},
		{"GET", "/closed?live=sse", "", nil},
		{"GET", "/?prefix=/&limit=2&start_after=/a", "", nil},
		{"HEAD", "/closed", "", nil},
		{"PUT", "/new", "Content-Type: text/plain\nPico-TTL: 10\nPico-Expires-At: 2100-01-01T00:00:00Z\nPico-Closed: true", []byte("first")},
		{"PUT", "/s", "Content-Type: application/json", nil},
		{"POST", "/s", "Content-Type: application/vnd.picomq.batch", batch},
		{"POST", "/s", "Content-Type: application/vnd.picomq.batch+json", []byte(`{"records":[{"body":"a","headers":{"k":"v"}},{"body_b64":"AAE="}]}`)},
		{"POST", "/s", "Content-Type: application/vnd.picomq.batch+json", []byte(`{"records":[{"body":"\ud800","headers":{"\udc00":"v"}}]}`)},
		{"POST", "/s", "Pico-Producer-Id: p\nPico-Producer-Epoch: 1\nPico-Producer-Seq: 0\nPico-Match-Seq: 3", []byte("x")},
		{"POST", "/s", "Pico-Closed: true", nil},
		{"POST", "/s", "Pico-Trim-Seq: 2", nil},
		{"POST", "/s", "Pico-Match-Seq: 0\nPico-Match-Seq: 5", []byte("x")},
		{"POST", "/s", "Pico-Closed: false\nPico-Closed: true", nil},
		{"PUT", "/new", "Pico-TTL: 1\nPico-TTL: 1\nContent-Type: a/b\nContent-Type: a/c", nil},
		{"POST", "/closed", "", []byte("late")},
		{"DELETE", "/s", "", nil},
		{"OPTIONS", "/x", "", nil},
		{"PATCH", "/s", "", nil},
		{"GET", "/remote?seq=1", "", nil},
	} {
		f.Add(seed.method, seed.target, seed.headers, seed.body, false)
	}

	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte, chunked bool) {
		req := handlertest.FuzzRequest("pico.test", method, target, headers, body, chunked)
		if req == nil {
			return
		}
		seedStreams(fake)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		checkFuzzResponse(t, req, rec)
		if rec.Code < 300 && contradicts(req, len(body) > 0) {
			t.Fatalf("%s %s: %d for a header given twice with different values %v", req.Method, req.RequestURI, rec.Code, req.Header)
		}
	})
}

// contradicts reports whether req gives a header its handler reads once
// twice with different values.
func contradicts(req *http.Request, hasBody bool) bool {
	switch req.Method {
	case http.MethodPut:
		return createOnce.Check(req.Header) != nil
	case http.MethodPost:
		return appendOnce.Check(req.Header) != nil || trimOnce.Check(req.Header) != nil ||
			(hasBody && contentTypeOnce.Check(req.Header) != nil)
	}
	return false
}

// seedStreams resets the fake to a few streams in known states.
func seedStreams(fake *fakeStreams) {
	fake.Reset()
	ctx := context.Background()
	recs := []domain.Record{{Body: []byte("aa")}, {Body: []byte{0xff}}, {Body: []byte("c"), Headers: []domain.Header{{Key: "k", Value: "v"}}}}
	_, _, _ = fake.Create(ctx, "/s", domain.StreamConfig{ContentType: "text/plain"}, recs, false)
	_, _, _ = fake.Create(ctx, "/closed", domain.StreamConfig{ContentType: "application/json", TTLSec: 5, ExpiresAtMs: 4102444800000}, recs[:1], true)
	_, _ = fake.Trim(ctx, "/s", 1)
}

func checkFuzzResponse(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s %s: %d %s", req.Method, req.RequestURI, rec.Code, rec.Body)
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" || (rec.Header().Get("Access-Control-Allow-Origin") == "*") != cors.ForBrowser(req) {
		t.Fatalf("%s %s: %d without the common headers, or cross-origin headers for a client that is no browser", req.Method, req.RequestURI, rec.Code)
	}
	noBody := req.Method == http.MethodHead || rec.Code == http.StatusNoContent || rec.Code == http.StatusNotModified
	if noBody && rec.Body.Len() != 0 {
		t.Fatalf("%s %s: %d with a body %q", req.Method, req.RequestURI, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && !noBody {
		var body errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" || body.Message == "" {
			t.Fatalf("%s %s: %d with error body %q", req.Method, req.RequestURI, rec.Code, rec.Body)
		}
	}
}
