package conformance

import (
	"fmt"
	"sync"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsAppendCases(t *testing.T, open StreamsOpener) {
	t.Run("AppendAssignsConsecutiveOffsets", func(t *testing.T) { testAppendOffsets(t, open) })
	t.Run("AppendStampsOneTimestampNeverBelowThePrevious", func(t *testing.T) { testAppendTimestamps(t, open) })
	t.Run("ConcurrentAppendsGetDistinctOffsets", func(t *testing.T) { testAppendRace(t, open) })
	t.Run("ContentTypeMismatchIsAConflict", func(t *testing.T) { testAppendContentType(t, open) })
}

func testAppendOffsets(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	for _, want := range []struct {
		bodies      []string
		first, next uint64
	}{
		{[]string{"a", "b", "c"}, 0, 3},
		{[]string{"d"}, 3, 4},
		{[]string{"e", "f"}, 4, 6},
	} {
		res := mustAppendBodies(ctx, t, s, "/s", want.bodies...)
		if res.First != want.first || res.Next != want.next || res.Duplicate || res.Closed {
			t.Fatalf("Append(%q) = %+v, want [%d, %d)", want.bodies, res, want.first, want.next)
		}
	}
	if head := mustHeadStream(ctx, t, s, "/s"); head.Next != 6 {
		t.Fatalf("Head after 6 records: next %d", head.Next)
	}
	expectBodies(ctx, t, s, "/s", "a", "b", "c", "d", "e", "f")
}

// The records of one append share its timestamp, and no record's is below
// the one before it.
func testAppendTimestamps(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	var stamps []int64
	for _, batch := range [][]string{{"a", "b", "c"}, {"d"}, {"e", "f"}} {
		res := mustAppendBodies(ctx, t, s, "/s", batch...)
		for range batch {
			stamps = append(stamps, res.TimestampMs)
		}
	}
	_, recs := readAll(ctx, t, s, "/s")
	expectTimestamps(t, recs, stamps)
}

// expectTimestamps checks each record carries its append's timestamp and
// none is below the one before.
func expectTimestamps(t *testing.T, recs []domain.Record, stamps []int64) {
	t.Helper()
	if len(recs) != len(stamps) {
		t.Fatalf("read %d records, appended %d", len(recs), len(stamps))
	}
	for i, r := range recs {
		if r.TimestampMs == 0 || r.TimestampMs != stamps[i] {
			t.Fatalf("record %d has timestamp %d, its append answered %d", i, r.TimestampMs, stamps[i])
		}
		if i > 0 && r.TimestampMs < recs[i-1].TimestampMs {
			t.Fatalf("record %d has timestamp %d, below the previous record's %d", i, r.TimestampMs, recs[i-1].TimestampMs)
		}
	}
}

func testAppendRace(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	const writers, each = 8, 10
	sent := make([]string, writers*each) // by offset
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				body := fmt.Sprintf("w%d-%d", w, i)
				res, err := s.Append(ctx, "/s", ports.AppendRequest{Records: records(body)})
				mu.Lock()
				if err == nil && res.Next == res.First+1 && res.First < uint64(len(sent)) && sent[res.First] == "" {
					sent[res.First] = body
				} else {
					t.Errorf("Append(%s) = %+v, %v; want one fresh offset", body, res, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	expectBodies(ctx, t, s, "/s", sent...)
}

// A content type named by an append must be the stream's, compared as media
// types are.
func testAppendContentType(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	res := mustAppend(ctx, t, s, "/s", ports.AppendRequest{Records: records("a"), ContentType: "TEXT/Plain; charset=utf-8"})
	if res.First != 0 || res.Next != 1 {
		t.Fatalf("Append with the same media type = %+v", res)
	}
	_, err := s.Append(ctx, "/s", ports.AppendRequest{Records: records(`{}`), ContentType: "application/json"})
	expectStreamError(t, err, ports.ErrStreamConflict, "Append of application/json to a text/plain stream")
	expectBodies(ctx, t, s, "/s", "a")
}

// testJSONRecords: every record of a JSON stream is one JSON value in
// UTF-8, or the whole request is refused before anything is written.
func testJSONRecords(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	js := domain.StreamConfig{ContentType: "application/json"}
	_, _, err := s.Create(ctx, "/j", js, records("not json"), false)
	expectStreamError(t, err, ports.ErrBadRequest, "Create of a JSON stream with a record that is not JSON")
	_, err = s.Head(ctx, "/j")
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Head after a refused Create")
	mustCreateStream(ctx, t, s, "/j", js, `{"a":1}`)
	for _, body := range []string{"not json", `1 2`, "\"\xff\"", ""} {
		_, err := s.Append(ctx, "/j", ports.AppendRequest{Records: records(`"fine"`, body)})
		expectStreamError(t, err, ports.ErrBadRequest, fmt.Sprintf("Append of %q to a JSON stream", body))
	}
	mustAppendBodies(ctx, t, s, "/j", `[1, "é"]`)
	expectBodies(ctx, t, s, "/j", `{"a":1}`, `[1, "é"]`)
}
