package dshttp

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

// fixedClock returns a Config option that sets the cursor clock to t.
func fixedClock(t time.Time) func(*Config) {
	return func(c *Config) { c.Now = func() time.Time { return t } }
}

func TestCursorIsTheCurrentInterval(t *testing.T) {
	for at, want := range map[time.Time]string{
		cursorEpoch:                                 "0",
		cursorEpoch.Add(19 * time.Second):           "0",
		cursorEpoch.Add(20 * time.Second):           "1",
		cursorEpoch.Add(24 * time.Hour):             "4320",
		cursorEpoch.Add(-time.Hour):                 "0",
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC): strconv.FormatUint(uint64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Sub(cursorEpoch)/(20*time.Second)), 10),
	} {
		s := newServer(Config{Streams: newFakeStreams(), Now: func() time.Time { return at }})
		for _, client := range []string{"", "0", "abc", "-5", "+9"} {
			if client == "0" && want == "0" {
				continue // equal to the current interval: jittered
			}
			if got := s.cursor(client); got != want {
				t.Errorf("at %v, client %q: cursor %s, want %s", at, client, got, want)
			}
		}
	}
}

// TestCursorJitter: a client at or past the current interval gets a later
// cursor, by 1 to 180 intervals (1 to 3600 seconds).
func TestCursorJitter(t *testing.T) {
	now := cursorEpoch.Add(1000 * cursorInterval)
	s := newServer(Config{Streams: newFakeStreams(), Now: func() time.Time { return now }})
	for _, tc := range []struct {
		jitterSec uint64
		client    string
		want      string
	}{
		{1, "1000", "1001"}, // under one interval still moves by one
		{19, "1000", "1001"},
		{40, "1000", "1002"},
		{3600, "1000", "1180"},
		{3600, "5000", "5180"},
		{3600, "999", "1000"}, // behind: the current interval
		{20, strconv.FormatUint(math.MaxUint64, 10), "1000"}, // no overflow
	} {
		s.jitterSeconds = func() uint64 { return tc.jitterSec }
		if got := s.cursor(tc.client); got != tc.want {
			t.Errorf("jitter %ds, client %s: %s, want %s", tc.jitterSec, tc.client, got, tc.want)
		}
	}
	// The real source stays in range.
	s = newServer(Config{Streams: newFakeStreams(), Now: func() time.Time { return now }})
	for range 1000 {
		got, _ := strconv.ParseUint(s.cursor("1000"), 10, 64)
		if got < 1001 || got > 1180 {
			t.Fatalf("jittered cursor %d out of range", got)
		}
	}
}

// TestCursorOnTheWire: a long-poll echoing its cursor gets a greater one.
func TestCursorOnTheWire(t *testing.T) {
	h := newHarness(t, fixedClock(cursorEpoch.Add(time.Hour)), func(c *Config) { c.LongPollTimeout = time.Millisecond })
	h.create("/s")
	rec := h.do(http.MethodGet, "/s?offset=-1&live=long-poll", nil)
	handlertest.WantHeaders(t, rec, "Stream-Cursor", "180")
	rec = h.do(http.MethodGet, "/s?offset=-1&live=long-poll&cursor=180", nil)
	if c, _ := strconv.ParseUint(rec.Header().Get("Stream-Cursor"), 10, 64); c <= 180 {
		t.Errorf("cursor %q does not move past the client's", rec.Header().Get("Stream-Cursor"))
	}
}

// TestStreamCursorNeverGoesBack: the control events of one event stream
// answer one request, each with its own jitter; their cursors never go
// back, and follow the clock past the client's.
func TestStreamCursorNeverGoesBack(t *testing.T) {
	now := cursorEpoch.Add(1000 * cursorInterval)
	s := newServer(Config{Streams: newFakeStreams(), Now: func() time.Time { return now }})
	jitters := []uint64{3600, 20, 1000, 40}
	var last uint64
	var got []string
	for _, j := range jitters {
		s.jitterSeconds = func() uint64 { return j }
		got = append(got, s.streamCursor("1000", &last))
	}
	now = now.Add(500 * cursorInterval) // interval 1500, past the last cursor (1180)
	got = append(got, s.streamCursor("1000", &last))
	if want := []string{"1180", "1180", "1180", "1180", "1500"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("cursors %v, want %v", got, want)
	}
}
