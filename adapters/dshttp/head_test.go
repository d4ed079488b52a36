package dshttp

import (
	"net/http"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

func TestHead(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain", "Stream-TTL", "3600")
	h.appendBodies("/s", "text/plain", "a", "b")
	before := h.fake.AccessCount("/s")
	rec := h.do(http.MethodHead, "/s", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Content-Type", "text/plain", "Stream-Next-Offset", off(2), "Stream-TTL", "3600",
		"Stream-Expires-At", "", "Stream-Closed", "", "Cache-Control", "no-store")
	if rec.Body.Len() != 0 {
		t.Errorf("HEAD body %q", rec.Body)
	}
	if h.fake.AccessCount("/s") != before {
		t.Error("HEAD counted as an access (it must not renew the idle TTL)")
	}
	h.closeStream("/s")
	handlertest.WantHeaders(t, h.do(http.MethodHead, "/s", nil), "Stream-Closed", "true")
}

func TestHeadExpiresAt(t *testing.T) {
	h := newHarness(t)
	h.create("/e", "Stream-Expires-At", "2100-01-02T03:04:05+01:00")
	handlertest.WantHeaders(t, h.do(http.MethodHead, "/e", nil), "Stream-Expires-At", "2100-01-02T02:04:05Z", "Stream-TTL", "",
		"Content-Type", "application/octet-stream")
	h.create("/ms", "Stream-Expires-At", "2100-01-02T03:04:05.250Z")
	handlertest.WantHeaders(t, h.do(http.MethodHead, "/ms", nil), "Stream-Expires-At", "2100-01-02T03:04:05.250Z")
}

func TestHeadMissingHasNoBody(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodHead, "/missing", nil)
	handlertest.WantStatus(t, rec, http.StatusNotFound)
	if rec.Body.Len() != 0 {
		t.Errorf("body %q", rec.Body)
	}
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "old")
	handlertest.WantStatus(t, h.do(http.MethodDelete, "/s", nil), http.StatusNoContent)
	handlertest.WantStatus(t, h.do(http.MethodDelete, "/s", nil), http.StatusNotFound)
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s", nil), http.StatusNotFound)
	// The name is free again, with fresh contents.
	h.create("/s", "Content-Type", "text/plain")
	rec := h.do(http.MethodGet, "/s", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	if rec.Body.Len() != 0 {
		t.Errorf("re-created stream reads %q", rec.Body)
	}
}
