package picohttp

import (
	"net/http"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

// TestCatchUpPagesWaitTheirTurn: a page short of the tail takes a turn of
// its records' bytes, on a plain read, a long-poll and an event stream; a
// page reaching the tail takes none, and every append counts as
// foreground work.
func TestCatchUpPagesWaitTheirTurn(t *testing.T) {
	sched := &handlertest.Scheduler{}
	h := newHarness(t, func(c *Config) { c.Reads = sched })
	h.create("/s")
	h.appendBodies("/s", "aaaa", "bb", "c")
	if appends, turns, _, _ := sched.Counts(); appends != 3 || turns != 0 {
		t.Fatalf("after 3 appends: %d appends counted, %d turns", appends, turns)
	}
	for _, target := range []string{"/s?seq=0&count=1", "/s?seq=0&count=1&live=long-poll"} {
		if rec := h.do(http.MethodGet, target, nil); rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", target, rec.Code)
		}
	}
	if _, turns, bytes, held := sched.Counts(); turns != 2 || bytes != 8 || held != 0 {
		t.Fatalf("two catch-up pages: %d turns of %d bytes, %d still held; want 2 of 8, 0", turns, bytes, held)
	}
	h.do(http.MethodGet, "/s?seq=0", nil)
	h.do(http.MethodGet, "/s?seq=1&live=long-poll", nil)
	if _, turns, _, _ := sched.Counts(); turns != 2 {
		t.Fatalf("pages reaching the tail took turns: %d", turns)
	}
	rec := h.do(http.MethodGet, "/s?seq=0&count=1&live=sse", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("SSE: %d", rec.Code)
	}
	if _, turns, _, held := sched.Counts(); turns != 4 || held != 0 {
		t.Fatalf("an event stream from 0, one record a page: %d turns in all, %d held; want 4 (2 before), 0", turns, held)
	}
}
