package picohttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

func TestLongPollAnswersAtOnceWithData(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour })
	h.create("/s")
	h.appendBodies("/s", "a")
	rec := h.do(http.MethodGet, "/s?live=long-poll", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true")
}

func TestLongPollTimesOutWith204(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = 30 * time.Millisecond })
	h.create("/s")
	h.appendBodies("/s", "a")
	start := time.Now()
	rec := h.do(http.MethodGet, "/s?live=long-poll&seq=1", nil)
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("answered after %v, before the timeout", waited)
	}
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true", "Pico-Cursor", "1",
		"Cache-Control", "no-store", "Pico-Closed", "", "ETag", "")
	if rec.Body.Len() != 0 {
		t.Errorf("204 body %q", rec.Body)
	}
}

func TestLongPollWakesOnAppend(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = 10 * time.Second })
	h.create("/s")
	go func() {
		time.Sleep(20 * time.Millisecond)
		h.appendBodies("/s", "late")
	}()
	start := time.Now()
	rec := h.do(http.MethodGet, "/s?live=long-poll&seq=now", nil)
	if time.Since(start) > 5*time.Second {
		t.Fatal("the append did not wake the long-poll")
	}
	handlertest.WantStatus(t, rec, http.StatusOK)
	if got := bodiesOf(jsonPage(t, rec)); len(got) != 1 || got[0] != "late" {
		t.Errorf("page %v", got)
	}
}

func TestLongPollOnClosedTail(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour })
	h.create("/s")
	h.appendBodies("/s", "a")
	h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	rec := h.do(http.MethodGet, "/s?live=long-poll&seq=1", nil)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true", "Pico-Up-To-Date", "true", "Pico-Next-Seq", "1")
	// With data left, the data comes first.
	rec = h.do(http.MethodGet, "/s?live=long-poll&seq=0", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true")
}

func TestLongPollWakesOnCloseAndDelete(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = 10 * time.Second })
	h.create("/s")
	go func() {
		time.Sleep(20 * time.Millisecond)
		h.do(http.MethodPost, "/s", nil, "Pico-Closed", "true")
	}()
	rec := h.do(http.MethodGet, "/s?live=long-poll", nil)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	handlertest.WantHeaders(t, rec, "Pico-Closed", "true")

	h.create("/d")
	go func() {
		time.Sleep(20 * time.Millisecond)
		h.do(http.MethodDelete, "/d", nil)
	}()
	wantError(t, h.do(http.MethodGet, "/d?live=long-poll", nil), http.StatusNotFound, "not_found", "")
}

func TestLongPollEndsOnShutdown(t *testing.T) {
	done := make(chan struct{})
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour; c.Done = done })
	h.create("/s")
	go func() {
		time.Sleep(20 * time.Millisecond)
		close(done)
	}()
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s?live=long-poll", nil), http.StatusNoContent)
}

func TestLongPollEndsWithTheClient(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LongPollTimeout = time.Hour })
	h.create("/s")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req := httptest.NewRequest(http.MethodGet, "/s?live=long-poll", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	handlertest.WantStatus(t, rec, http.StatusNoContent)
}
