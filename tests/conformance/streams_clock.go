package conformance

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsClockCases(t *testing.T, open StreamsOpener) {
	t.Run("TimestampsFollowTheClockAndNeverGoBack", func(t *testing.T) { testClockTimestamps(t, open) })
	t.Run("IdleTTLIsRenewedByAccessButNotByHead", func(t *testing.T) { testIdleTTL(t, open) })
	t.Run("ExpiredStreamIsNotFoundAndItsNameFree", func(t *testing.T) { testStreamExpiry(t, open) })
}

// openWithClock opens an implementation whose features say it reads the
// opener's clock.
func openWithClock(t *testing.T, open StreamsOpener) (ports.Streams, *Clock) {
	s, clock := open(t)
	if clock == nil {
		t.Fatal("the features declare a clock, but the opener returned none")
	}
	return s, clock
}

// A record's timestamp is the clock's time, unless the clock went back
// below the previous record's: then it is not below that one.
func testClockTimestamps(t *testing.T, open StreamsOpener) {
	ctx := testContext(t)
	s, clock := openWithClock(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	var stamps []int64
	prev := int64(math.MinInt64)
	for _, step := range []time.Duration{0, time.Second, -time.Minute, 2 * time.Minute} {
		clock.Advance(step)
		res := mustAppendBodies(ctx, t, s, "/s", "a", "b")
		switch now := clock.Now().UnixMilli(); {
		case now >= prev && res.TimestampMs != now:
			t.Fatalf("Append after moving the clock %v: timestamp %d, want the clock's %d", step, res.TimestampMs, now)
		case res.TimestampMs < prev:
			t.Fatalf("Append after moving the clock %v: timestamp %d, below the previous %d", step, res.TimestampMs, prev)
		}
		prev = res.TimestampMs
		stamps = append(stamps, prev, prev)
	}
	_, recs := readAll(ctx, t, s, "/s")
	expectTimestamps(t, recs, stamps)
}

// Reads and writes (Read, ReadTail, Append) renew an idle TTL; Head does
// not, so a stream only headed expires from its last access.
func testIdleTTL(t *testing.T, open StreamsOpener) {
	ctx := testContext(t)
	s, clock := openWithClock(t, open)
	idle := domain.StreamConfig{ContentType: "text/plain", IdleTTLSec: 2}
	renewed := []string{"/read", "/tail", "/append"}
	for _, name := range append(renewed, "/headed") {
		mustCreateStream(ctx, t, s, name, idle)
	}
	clock.Advance(1500 * time.Millisecond)
	mustReadStream(ctx, t, s, "/read", 0, ports.ReadLimits{})
	if _, err := s.ReadTail(ctx, "/tail"); err != nil {
		t.Fatalf("ReadTail: %v", err)
	}
	mustAppendBodies(ctx, t, s, "/append", "a")
	mustHeadStream(ctx, t, s, "/headed")
	clock.Advance(1500 * time.Millisecond) // 3 s after the creates, 1.5 s after the accesses
	for _, name := range renewed {
		mustHeadStream(ctx, t, s, name)
	}
	_, err := s.Head(ctx, "/headed")
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Head 3 s after the last access, with an idle TTL of 2 s")
	clock.Advance(400 * time.Millisecond) // 1.9 s after the accesses
	for _, name := range renewed {
		mustHeadStream(ctx, t, s, name)
	}
	clock.Advance(200 * time.Millisecond) // 2.1 s: the heads renewed nothing
	for _, name := range renewed {
		expectGone(ctx, t, s, name)
	}
	expectNameFree(ctx, t, s, "/headed", idle)
}

func testStreamExpiry(t *testing.T, open StreamsOpener) {
	ctx := testContext(t)
	s, clock := openWithClock(t, open)
	expiring := domain.StreamConfig{ContentType: "text/plain", ExpiresAtMs: clock.Now().Add(10 * time.Second).UnixMilli()}
	mustCreateStream(ctx, t, s, "/e", expiring, "a")
	mustCreateStream(ctx, t, s, "/kept", textPlain)
	clock.Advance(9 * time.Second)
	expectBodies(ctx, t, s, "/e", "a")
	clock.Advance(2 * time.Second)
	expectGone(ctx, t, s, "/e")
	if page := mustListStreams(ctx, t, s, "", "", 10); streamNames(page) != "/kept" {
		t.Fatalf("List after the expiry = %q, want /kept", streamNames(page))
	}
	expectNameFree(ctx, t, s, "/e", textPlain)
}

// expectNameFree checks an expired stream's name makes a new, empty stream.
func expectNameFree(ctx context.Context, t *testing.T, s ports.Streams, name string, cfg domain.StreamConfig) {
	t.Helper()
	info, created, err := s.Create(ctx, name, cfg, nil, false)
	if err != nil || !created || info.Next != 0 {
		t.Fatalf("Create(%s) after it expired = %+v created=%v %v; want a new empty stream", name, info, created, err)
	}
	expectBodies(ctx, t, s, name)
}
