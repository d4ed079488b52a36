package dshttp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/cors"
	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/domain"
)

// FuzzHandler sends arbitrary requests to the handler backed by the fake
// (which never fails): no panic, no 5xx but 503 and 501, and every
// response is well formed.
func FuzzHandler(f *testing.F) {
	fake := newFakeStreams()
	fake.SetOwner("/remote", "http://other:4437/")
	srv := newServer(Config{Streams: fake, LongPollTimeout: 50 * time.Microsecond, SSEMaxDuration: 200 * time.Microsecond,
		MaxBodyBytes: 1 << 16, MaxChunkBytes: 16, Logger: slog.New(slog.DiscardHandler)})
	handler := srv.handler()

	for _, seed := range []struct {
		method, target, headers string
		body                    []byte
	}{
		{"GET", "/s", "", nil},
		{"GET", "/s?offset=0000000000000000_0000000000000001", "If-None-Match: *", nil},
		{"GET", "/s?offset=now&live=long-poll&cursor=5", "", nil},
		{"GET", "/j?offset=-1&live=sse", "", nil},
		{"GET", "/closed?offset=now&live=sse", "", nil},
		{"GET", "/s?offset=0_1%2C0_2", "", nil},
		{"HEAD", "/closed", "", nil},
		{"PUT", "/new", "Content-Type: text/plain\nStream-TTL: 10\nStream-Closed: true", []byte("first")},
		{"PUT", "/new", "Stream-Expires-At: 2100-01-01T00:00:00Z", nil},
		{"PUT", "/j2", "Content-Type: application/json", []byte("[]")},
		{"PUT", "/fork", "Stream-Forked-From: /s\nStream-Fork-Offset: 0_0", nil},
		{"POST", "/j", "Content-Type: application/json", []byte(`[{"a":1},[2]]`)},
		{"POST", "/j", "Content-Type: application/json", []byte(`["\ud800", "\ud83d\ude00"]`)},
		{"POST", "/s", "Content-Type: text/plain\nProducer-Id: p\nProducer-Epoch: 1\nProducer-Seq: 0\nStream-Seq: 5", []byte("x")},
		{"POST", "/s", "Stream-Closed: true", nil},
		{"POST", "/s", "Content-Type: text/plain\nStream-Seq: 1\nStream-Seq: 2", []byte("x")},
		{"POST", "/s", "Stream-Closed: false\nStream-Closed: true", nil},
		{"PUT", "/new", "Stream-TTL: 1\nStream-TTL: 1\nContent-Type: a/b\nContent-Type: a/c", nil},
		{"POST", "/closed", "Content-Type: application/json", []byte("late")},
		{"DELETE", "/s", "", nil},
		{"OPTIONS", "/x", "", nil},
		{"PATCH", "/s", "", nil},
		{"GET", "/remote?offset=-1", "", nil},
		{"GET", "/v1/stream/__ds/subscriptions/x", "", nil},
	} {
		f.Add(seed.method, seed.target, seed.headers, seed.body, false)
	}

	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte, chunked bool) {
		req := handlertest.FuzzRequest("ds.test", method, target, headers, body, chunked)
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
		return appendOnce.Check(req.Header) != nil ||
			(hasBody && (contentTypeOnce.Check(req.Header) != nil || writerSeqOnce.Check(req.Header) != nil))
	}
	return false
}

// seedStreams resets the fake to a few streams in known states.
func seedStreams(fake *fakeStreams) {
	fake.Reset()
	ctx := context.Background()
	recs := []domain.Record{{Body: []byte("aa")}, {Body: []byte{0xff}}, {Body: []byte("c")}}
	_, _, _ = fake.Create(ctx, "/s", domain.StreamConfig{ContentType: "text/plain"}, recs, false)
	_, _, _ = fake.Create(ctx, "/j", domain.StreamConfig{ContentType: "application/json"},
		[]domain.Record{{Body: []byte(`{"a":1}`)}, {Body: []byte(`"b\r\nc"`)}}, false)
	_, _, _ = fake.Create(ctx, "/closed", domain.StreamConfig{ContentType: "application/octet-stream", IdleTTLSec: 5}, recs[:1], true)
	_, _ = fake.Trim(ctx, "/s", 1)
}

var mintedOffset = regexp.MustCompile(`^0000000000000000_\d{16,20}$`)

func checkFuzzResponse(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	what := req.Method + " " + req.RequestURI
	if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable && rec.Code != http.StatusNotImplemented {
		t.Fatalf("%s: %d %s", what, rec.Code, rec.Body)
	}
	hdr := rec.Header()
	browser := cors.ForBrowser(req)
	if hdr.Get("X-Content-Type-Options") != "nosniff" || (hdr.Get("Access-Control-Allow-Origin") == "*") != browser ||
		(hdr.Get("Cross-Origin-Resource-Policy") == "cross-origin") != browser {
		t.Fatalf("%s: %d without the common headers, or cross-origin headers for a client that is no browser", what, rec.Code)
	}
	if next := hdr.Get("Stream-Next-Offset"); next != "" && !mintedOffset.MatchString(next) {
		t.Fatalf("%s: Stream-Next-Offset %q", what, next)
	}
	if closed, ok := hdr["Stream-Closed"]; ok && (len(closed) != 1 || closed[0] != "true") {
		t.Fatalf("%s: Stream-Closed %q", what, closed)
	}
	noBody := req.Method == http.MethodHead || rec.Code == http.StatusNoContent || rec.Code == http.StatusNotModified
	if noBody && rec.Body.Len() != 0 {
		t.Fatalf("%s: %d with a body %q", what, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && !noBody {
		ct := hdr.Get("Content-Type")
		if (ct != textPlain && ct != jsonType) || rec.Body.Len() == 0 {
			t.Fatalf("%s: %d with error body %q (%s)", what, rec.Code, rec.Body, ct)
		}
	}
	for _, forkHeader := range []string{headerForkedFrom, headerForkOffset, headerForkSubOffset} {
		if hdr.Get(forkHeader) != "" {
			t.Fatalf("%s: echoed %s", what, forkHeader)
		}
	}
}
