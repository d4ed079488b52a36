package dshttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

func TestLiveReadsNeedAnOffset(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	for _, q := range []string{"live=long-poll", "live=sse", "live=long-poll&cursor=5"} {
		wantError(t, h.do(http.MethodGet, "/s?"+q, nil), http.StatusBadRequest, "offset")
	}
	wantError(t, h.do(http.MethodGet, "/s?offset=-1&live=websocket", nil), http.StatusBadRequest, "live")
}

func TestLongPollAnswersAtOnceWithData(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	rec := h.do(http.MethodGet, "/s?offset=-1&live=long-poll", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(1), "Stream-Up-To-Date", "true")
	if c := rec.Header().Get("Stream-Cursor"); !headerval.IsDigits(c) {
		t.Errorf("Stream-Cursor %q", c)
	}
	if rec.Body.String() != "a" || rec.Header().Get("ETag") == "" {
		t.Errorf("body %q, ETag %q", rec.Body, rec.Header().Get("ETag"))
	}
}

func TestLongPollTimesOutWith204(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = 30 * time.Millisecond })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	for _, offset := range []string{off(1), "now"} {
		start := time.Now()
		rec := h.do(http.MethodGet, "/s?live=long-poll&offset="+offset, nil)
		if waited := time.Since(start); waited < 30*time.Millisecond {
			t.Errorf("answered after %v, before the timeout", waited)
		}
		handlertest.WantStatus(t, rec, http.StatusNoContent)
		handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(1), "Stream-Up-To-Date", "true", "Cache-Control", "no-store",
			"Stream-Closed", "", "ETag", "")
		if c := rec.Header().Get("Stream-Cursor"); !headerval.IsDigits(c) {
			t.Errorf("Stream-Cursor %q", c)
		}
		if rec.Body.Len() != 0 {
			t.Errorf("204 body %q", rec.Body)
		}
	}
}

func TestLongPollWakesOnAppend(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = 10 * time.Second })
	h.create("/j", "Content-Type", "application/json")
	h.appendBodies("/j", "application/json", `"before"`)
	go func() {
		time.Sleep(20 * time.Millisecond)
		h.appendBodies("/j", "application/json", `["late", 2]`)
	}()
	start := time.Now()
	rec := h.do(http.MethodGet, "/j?live=long-poll&offset=now", nil)
	if time.Since(start) > 5*time.Second {
		t.Fatal("the append did not wake the long-poll")
	}
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(3), "Stream-Up-To-Date", "true")
	if rec.Body.String() != `["late",2]` || rec.Header().Get("Stream-Cursor") == "" {
		t.Errorf("body %s, cursor %q", rec.Body, rec.Header().Get("Stream-Cursor"))
	}
}

func TestLongPollOnClosedTail(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	h.closeStream("/s")
	for _, offset := range []string{off(1), "now"} {
		rec := h.do(http.MethodGet, "/s?live=long-poll&offset="+offset, nil)
		handlertest.WantStatus(t, rec, http.StatusNoContent)
		handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Up-To-Date", "true", "Stream-Next-Offset", off(1), "Stream-Cursor", "")
	}
	// With data left, the data comes first, marked as the end.
	rec := h.do(http.MethodGet, "/s?live=long-poll&offset=-1", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true")
}

func TestLongPollWakesOnCloseAndDelete(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = 10 * time.Second })
	h.create("/s")
	go func() {
		time.Sleep(20 * time.Millisecond)
		h.closeStream("/s")
	}()
	rec := h.do(http.MethodGet, "/s?live=long-poll&offset=-1", nil)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true")

	h.create("/d")
	go func() {
		time.Sleep(20 * time.Millisecond)
		h.do(http.MethodDelete, "/d", nil)
	}()
	handlertest.WantStatus(t, h.do(http.MethodGet, "/d?live=long-poll&offset=-1", nil), http.StatusNotFound)
	handlertest.WantStatus(t, h.do(http.MethodGet, "/missing?live=long-poll&offset=now", nil), http.StatusNotFound)
}

func TestLongPollEndsOnShutdown(t *testing.T) {
	done := make(chan struct{})
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour; c.Done = done })
	h.create("/s")
	go func() {
		time.Sleep(20 * time.Millisecond)
		close(done)
	}()
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s?live=long-poll&offset=-1", nil), http.StatusNoContent)
}

func TestLongPollEndsWithTheClient(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour })
	h.create("/s")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req := httptest.NewRequest(http.MethodGet, "/s?live=long-poll&offset=-1", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
}
