package dshttp

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

func TestCreate(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/v1/stream/a", nil, "Content-Type", "text/plain")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Location", "http://example.com/v1/stream/a", "Content-Type", "text/plain",
		"Stream-Next-Offset", off(0), "Stream-Closed", "", "Cache-Control", "no-store")
	if u, err := url.Parse(rec.Header().Get("Location")); err != nil || !u.IsAbs() {
		t.Errorf("Location %q is not absolute", rec.Header().Get("Location"))
	}
	// The same config again: 200, no Location.
	rec = h.do(http.MethodPut, "/v1/stream/a", nil, "Content-Type", "TEXT/PLAIN")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Location", "", "Content-Type", "text/plain", "Stream-Next-Offset", off(0))
	// Another config: 409.
	wantError(t, h.do(http.MethodPut, "/v1/stream/a", nil, "Content-Type", "application/json"), http.StatusConflict, "")
	handlertest.WantStatus(t, h.do(http.MethodPut, "/v1/stream/a", nil, "Content-Type", "text/plain", "Stream-TTL", "60"), http.StatusConflict)
	handlertest.WantStatus(t, h.do(http.MethodPut, "/v1/stream/a", nil, "Content-Type", "text/plain", "Stream-Closed", "true"), http.StatusConflict)
}

// TestCreateEchoesTheContentType: the stored string comes back as is, and
// a create without one gets the default.
func TestCreateEchoesTheContentType(t *testing.T) {
	h := newHarness(t)
	for name, ct := range map[string]string{"/a": "text/plain", "/b": "application/json; charset=utf-8", "/c": "Application/X-Custom"} {
		handlertest.WantHeaders(t, h.do(http.MethodPut, name, nil, "Content-Type", ct), "Content-Type", ct)
		handlertest.WantHeaders(t, h.do(http.MethodHead, name, nil), "Content-Type", ct)
	}
	handlertest.WantHeaders(t, h.do(http.MethodPut, "/d", nil), "Content-Type", "application/octet-stream")
}

func TestCreateLocationScheme(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		tls     bool
		headers []string
		want    string
	}{
		{false, nil, "http://ds.test:4437/p/"},
		{true, nil, "https://ds.test:4437/p/"},
		{false, []string{"X-Forwarded-Proto", "https"}, "https://ds.test:4437/p/"},
		{true, []string{"X-Forwarded-Proto", "HTTP, https"}, "http://ds.test:4437/p/"},
		{false, []string{"X-Forwarded-Proto", "gopher"}, "http://ds.test:4437/p/"},
	} {
		name := "/p/" + strings.Repeat("x", h.fake.Len()+1)
		req := httptest.NewRequest(http.MethodPut, "http://ds.test:4437"+name, nil)
		if tc.tls {
			req.TLS = &tls.ConnectionState{}
		}
		for i := 0; i+1 < len(tc.headers); i += 2 {
			req.Header.Set(tc.headers[i], tc.headers[i+1])
		}
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		handlertest.WantStatus(t, rec, http.StatusCreated)
		handlertest.WantHeaders(t, rec, "Location", tc.want+strings.TrimPrefix(name, "/p/"))
	}
}

func TestCreateTTL(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 6e6, time.UTC)
	h := newHarness(t, func(c *Config) { c.Now = func() time.Time { return now } })
	for i, v := range []string{"abc", "-1", "00060", "+60", "60.5", "1e3", "", " 60", "18446744073709551616"} {
		rec := h.do(http.MethodPut, "/bad"+string(rune('a'+i)), nil, "Stream-TTL", v)
		wantError(t, rec, http.StatusBadRequest, "Stream-TTL")
	}
	if h.fake.Len() != 0 {
		t.Fatal("a bad TTL created a stream")
	}
	h.create("/ok", "Stream-TTL", "60")
	if info, _ := h.fake.Info("/ok"); info.Config.IdleTTLSec != 60 || info.Config.TTLSec != 0 || info.Config.ExpiresAtMs != 0 {
		t.Errorf("config %+v: Stream-TTL is the idle TTL", info.Config)
	}
	// A window of no time: the stream expires as it is made.
	h.create("/zero", "Stream-TTL", "0")
	if info, _ := h.fake.Info("/zero"); info.Config.IdleTTLSec != 0 || info.Config.ExpiresAtMs != now.UnixMilli() {
		t.Errorf("config %+v: Stream-TTL 0 is an expiry at creation, %d", info.Config, now.UnixMilli())
	}
	handlertest.WantStatus(t, h.do(http.MethodPut, "/ok", nil, "Stream-TTL", "60"), http.StatusOK)
	handlertest.WantStatus(t, h.do(http.MethodPut, "/ok", nil, "Stream-TTL", "61"), http.StatusConflict)
}

func TestCreateExpiresAt(t *testing.T) {
	h := newHarness(t)
	for i, v := range []string{"2100-01-01T00:00:00Z", "2100-01-01T00:00:00+00:00", "2100-01-01T00:00:00.123Z", "2100-01-01T01:00:00+01:00",
		"2100-01-01t00:00:00z"} { // RFC 3339 allows lower case
		name := "/ok" + string(rune('a'+i))
		h.create(name, "Stream-Expires-At", v)
		want := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
		if i == 2 {
			want += 123
		}
		if info, _ := h.fake.Info(name); info.Config.ExpiresAtMs != want {
			t.Errorf("%q stored as %d, want %d", v, info.Config.ExpiresAtMs, want)
		}
	}
	for _, v := range []string{"tomorrow", "2100-01-01", "2100-01-01 00:00:00Z", "4102444800000", "", "1969-12-31T23:59:59Z"} {
		wantError(t, h.do(http.MethodPut, "/bad", nil, "Stream-Expires-At", v), http.StatusBadRequest, "Stream-Expires-At")
	}
	wantError(t, h.do(http.MethodPut, "/both", nil, "Stream-TTL", "60", "Stream-Expires-At", "2100-01-01T00:00:00Z"),
		http.StatusBadRequest, "not both")
}

func TestCreateClosed(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/c", []byte("all of it"), "Content-Type", "text/plain", "Stream-Closed", "TRUE")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Next-Offset", off(1))
	handlertest.WantStatus(t, h.do(http.MethodPut, "/c", nil, "Content-Type", "text/plain", "Stream-Closed", "true"), http.StatusOK)
	// Only "true" counts; anything else is no header at all.
	for i, v := range []string{"false", "1", "yes", ""} {
		rec := h.do(http.MethodPut, "/open"+string(rune('a'+i)), nil, "Stream-Closed", v)
		handlertest.WantStatus(t, rec, http.StatusCreated)
		handlertest.WantHeaders(t, rec, "Stream-Closed", "")
	}
}

func TestCreateWithInitialBody(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/b", []byte{0, 1, 2, 0xff}, "Content-Type", "application/octet-stream")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(1))
	if got := h.fake.Records("/b"); len(got) != 1 || !bytes.Equal(got[0].Body, []byte{0, 1, 2, 0xff}) {
		t.Errorf("records %v", got)
	}
	// JSON bodies flatten like appends, and [] creates an empty stream.
	rec = h.do(http.MethodPut, "/j", []byte(` [ {"a": 1}, [2, 3] ] `), "Content-Type", "application/json")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(2))
	rec = h.do(http.MethodPut, "/empty", []byte("[]"), "Content-Type", "application/json")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(0))
	wantError(t, h.do(http.MethodPut, "/bad", []byte("{"), "Content-Type", "application/json"), http.StatusBadRequest, "JSON")
}

// TestCreateReadsChunkedBodies: a body without Content-Length is read.
func TestCreateReadsChunkedBodies(t *testing.T) {
	h := newHarness(t)
	req := httptest.NewRequest(http.MethodPut, "/chunked", io.NopCloser(strings.NewReader("streamed")))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	handlertest.WantStatus(t, rec, http.StatusCreated)
	if got := h.fake.Records("/chunked"); len(got) != 1 || string(got[0].Body) != "streamed" {
		t.Errorf("records %v", got)
	}
}

func TestCreateBodyLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxBodyBytes = 4 })
	wantError(t, h.do(http.MethodPut, "/big", []byte("12345")), http.StatusRequestEntityTooLarge, "limit")
	handlertest.WantStatus(t, h.do(http.MethodPut, "/fits", []byte("1234")), http.StatusCreated)
}

// TestCreateParsesForks: the fork headers become a fork request; the rules
// about which headers need which are checked before the service is asked.
func TestCreateParsesForks(t *testing.T) {
	h := newHarness(t)
	h.create("/src")
	rec := h.do(http.MethodPut, "/fork", []byte("body"), "Stream-Forked-From", "/src",
		"Stream-Fork-Offset", formatOffset(2), "Stream-Fork-Sub-Offset", "3", "Content-Type", "text/plain")
	handlertest.WantHeaders(t, rec, "Stream-Forked-From", "")
	if len(h.fake.Forks()) != 1 {
		t.Fatalf("%d fork requests reached the service", len(h.fake.Forks()))
	}
	got := h.fake.Forks()[0]
	if got.Source != "/src" || got.At == nil || *got.At != 2 || got.SubOffset != 3 ||
		got.Config.ContentType != "text/plain" || len(got.Initial) != 1 || string(got.Initial[0].Body) != "body" {
		t.Fatalf("fork request %+v", got)
	}
	for _, hdr := range []string{"Stream-Fork-Sub-Offset", "Stream-Fork-Offset"} {
		wantError(t, h.do(http.MethodPut, "/fork", nil, hdr, "0"), http.StatusBadRequest, "Stream-Forked-From")
	}
	for _, bad := range []string{"-1", "abc", "1.5", "05", "+1"} {
		handlertest.WantStatus(t, h.do(http.MethodPut, "/fork", nil, "Stream-Forked-From", "/src",
			"Stream-Fork-Offset", formatOffset(0), "Stream-Fork-Sub-Offset", bad), http.StatusBadRequest)
	}
	wantError(t, h.do(http.MethodPut, "/fork", nil, "Stream-Forked-From", "/src", "Stream-Fork-Sub-Offset", "2"),
		http.StatusBadRequest, "Stream-Fork-Offset")
	handlertest.WantStatus(t, h.do(http.MethodPut, "/fork", nil, "Stream-Forked-From", "/src", "Stream-Fork-Offset", "now"), http.StatusBadRequest)
	if len(h.fake.Forks()) != 1 {
		t.Fatalf("refused fork requests reached the service: %d", len(h.fake.Forks()))
	}
}
