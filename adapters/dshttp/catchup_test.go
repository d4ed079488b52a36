package dshttp

import (
	"net/http"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

// TestCatchUpPagesWaitTheirTurn: with pages of one message, a read short
// of the tail takes a turn, a read reaching it takes none, an event
// stream's catch-up pages take one each, and every append counts as
// foreground work.
func TestCatchUpPagesWaitTheirTurn(t *testing.T) {
	sched := &handlertest.Scheduler{}
	h := newHarness(t, func(c *Config) { c.Reads = sched; c.MaxChunkBytes = 1 })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "aaaa", "bb", "c")
	if appends, turns, _, _ := sched.Counts(); appends != 3 || turns != 0 {
		t.Fatalf("after 3 appends: %d appends counted, %d turns", appends, turns)
	}
	first := h.do(http.MethodGet, "/s?offset=-1", nil)
	if first.Code != http.StatusOK || first.Body.String() != "aaaa" {
		t.Fatalf("first page: %d %q", first.Code, first.Body)
	}
	if _, turns, bytes, held := sched.Counts(); turns != 1 || bytes != 4 || held != 0 {
		t.Fatalf("a catch-up page: %d turns of %d bytes, %d held; want 1 of 4, 0", turns, bytes, held)
	}
	last := h.do(http.MethodGet, "/s?offset=now", nil)
	if _, turns, _, _ := sched.Counts(); last.Code != http.StatusOK || turns != 1 {
		t.Fatalf("a read at the tail: %d, turns %d", last.Code, turns)
	}
	if rec := h.do(http.MethodGet, "/s?offset=-1&live=sse", nil); rec.Code != http.StatusOK {
		t.Fatalf("SSE: %d", rec.Code)
	}
	if _, turns, _, held := sched.Counts(); turns != 3 || held != 0 {
		t.Fatalf("an event stream from the start: %d turns in all, %d held; want 3 (1 before), 0", turns, held)
	}
}
