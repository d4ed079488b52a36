package picohttp

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

func TestCreate(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/orders", nil, "Content-Type", "text/plain; charset=utf-8")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Location", "/orders", "Pico-Next-Seq", "0", "Content-Type", "text/plain; charset=utf-8",
		"Cache-Control", "no-store", "Pico-Closed", "")
	if rec.Body.Len() != 0 {
		t.Errorf("create body %q", rec.Body)
	}
	// The same config again is 200, without Location.
	rec = h.do(http.MethodPut, "/orders", nil, "Content-Type", "TEXT/plain")
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Location", "", "Pico-Next-Seq", "0")
}

func TestCreateDefaultsContentType(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/s", nil)
	handlertest.WantHeaders(t, rec, "Content-Type", "application/octet-stream")
}

func TestCreateConflict(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "a", "b")
	rec := h.do(http.MethodPut, "/s", nil, "Content-Type", "application/json")
	body := wantError(t, rec, http.StatusConflict, "conflict", "text/plain")
	if body.NextSeq == nil || *body.NextSeq != 2 {
		t.Errorf("next_seq %v", body.NextSeq)
	}
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "2")
}

func TestCreateWithBodyWritesFirstRecord(t *testing.T) {
	h := newHarness(t)
	body := []byte("first\nrecord, \x00 binary")
	rec := h.do(http.MethodPut, "/s", body)
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "1")
	got := h.fake.Records("/s")
	if len(got) != 1 || !bytes.Equal(got[0].Body, body) {
		t.Fatalf("records %+v", got)
	}
}

func TestCreateSealed(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPut, "/s", []byte("only"), "Pico-Closed", "TRUE")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Next-Seq", "1")
	wantError(t, h.do(http.MethodPost, "/s", []byte("more")), http.StatusConflict, "closed", "")
	wantError(t, h.do(http.MethodPut, "/s2", nil, "Pico-Closed", "yes"), http.StatusBadRequest, "bad_request", `Pico-Closed must be true or false, got "yes"`)
}

// Pico-TTL is the original's sliding lifetime of the stream, record
// retention is Pico-Retention; the two lifetimes of a stream exclude each
// other, retention goes with either.
func TestCreateTTLRetentionAndExpiry(t *testing.T) {
	h := newHarness(t)
	future := time.Now().Add(time.Hour).Truncate(time.Second)
	rec := h.do(http.MethodPut, "/s", nil, "Pico-Retention", "3600", "Pico-Expires-At", future.In(time.FixedZone("x", 5*3600)).Format(time.RFC3339))
	handlertest.WantStatus(t, rec, http.StatusCreated)
	rec = h.do(http.MethodHead, "/s", nil)
	handlertest.WantHeaders(t, rec, "Pico-Retention", "3600", "Pico-Expires-At", future.UTC().Format(time.RFC3339), "Pico-TTL", "")
	if info, _ := h.fake.Info("/s"); info.Config.TTLSec != 3600 || info.Config.IdleTTLSec != 0 {
		cfg := info.Config
		t.Errorf("Pico-Retention made %+v, want record retention", cfg)
	}

	handlertest.WantStatus(t, h.do(http.MethodPut, "/idle", nil, "Pico-TTL", "60", "Pico-Retention", "30"), http.StatusCreated)
	handlertest.WantHeaders(t, h.do(http.MethodHead, "/idle", nil), "Pico-TTL", "60", "Pico-Retention", "30")
	if info, _ := h.fake.Info("/idle"); info.Config.IdleTTLSec != 60 || info.Config.TTLSec != 30 {
		cfg := info.Config
		t.Errorf("Pico-TTL made %+v, want an idle lifetime of 60 s and retention of 30 s", cfg)
	}
	wantError(t, h.do(http.MethodPut, "/both", nil, "Pico-TTL", "60", "Pico-Expires-At", future.Format(time.RFC3339)),
		http.StatusBadRequest, "bad_request", "give one")

	ms := time.Now().Add(time.Hour).UnixMilli()/1000*1000 + 123
	handlertest.WantStatus(t, h.do(http.MethodPut, "/ms", nil, "Pico-Expires-At", strconv.FormatInt(ms, 10)), http.StatusCreated)
	rec = h.do(http.MethodHead, "/ms", nil)
	handlertest.WantHeaders(t, rec, "Pico-Expires-At", time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"), "Pico-TTL", "")
}

func TestCreateRejectsBadHeaders(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ name, value, message string }{
		{"Pico-TTL", "01", `Pico-TTL must be a non-negative integer without leading zeros, got "01"`},
		{"Pico-TTL", "-1", `Pico-TTL must be a non-negative integer without leading zeros, got "-1"`},
		{"Pico-TTL", "99999999999999999999", "Pico-TTL is out of range"},
		{"Pico-Retention", "1.5", `Pico-Retention must be a non-negative integer`},
		{"Pico-Expires-At", "tomorrow", `Pico-Expires-At must be an RFC 3339 time or unix milliseconds, got "tomorrow"`},
		{"Pico-Expires-At", "2001-01-01T00:00:00Z", "in the past"},
		{"Pico-Expires-At", "1000", "in the past"},
	} {
		wantError(t, h.do(http.MethodPut, "/s", nil, tc.name, tc.value), http.StatusBadRequest, "bad_request", tc.message)
	}
	long := strings.Repeat("9", 100)
	wantError(t, h.do(http.MethodPut, "/s", nil, "Pico-TTL", "x"+long), http.StatusBadRequest, "bad_request", "(101 bytes)")
	// An empty value is absent.
	handlertest.WantStatus(t, h.do(http.MethodPut, "/s", nil, "Pico-TTL", ""), http.StatusCreated)
}

func TestCreateBodyOverLimitIs413(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxBodyBytes = 10 })
	wantError(t, h.do(http.MethodPut, "/s", bytes.Repeat([]byte("x"), 11)), http.StatusRequestEntityTooLarge, "too_large", "10 bytes")
	handlertest.WantStatus(t, h.do(http.MethodPut, "/s", bytes.Repeat([]byte("x"), 10)), http.StatusCreated)
}
