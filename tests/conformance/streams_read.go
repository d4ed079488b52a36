package conformance

import (
	"context"
	"slices"
	"testing"

	"github.com/picomq/pico/ports"
)

func streamsReadCases(t *testing.T, open StreamsOpener) {
	t.Run("ReadFromAnOffset", func(t *testing.T) { testReadFrom(t, open) })
	t.Run("ReadPagesByCount", func(t *testing.T) { testReadCount(t, open) })
	t.Run("ReadBoundedByBytesReturnsAtLeastOneRecord", func(t *testing.T) { testReadBytes(t, open) })
	t.Run("ReadBeyondTheTailIsABadRequest", func(t *testing.T) { testReadBeyondTail(t, open) })
	t.Run("ChangedClosesOnALaterAppend", func(t *testing.T) { testChangedOnAppend(t, open) })
	t.Run("ChangedClosesOnClose", func(t *testing.T) { testChangedOnClose(t, open) })
	t.Run("ChangedClosesOnDelete", func(t *testing.T) { testChangedOnDelete(t, open) })
	t.Run("ReadTailReadsAtTheTail", func(t *testing.T) { testReadTail(t, open) })
	t.Run("HeadReportsStartNextClosed", func(t *testing.T) { testHead(t, open) })
	t.Run("TrimDropsRecordsBelowTheStart", func(t *testing.T) { testTrim(t, open) })
}

// createNumbered makes /s holding numbered(0, n).
func createNumbered(ctx context.Context, t *testing.T, s ports.Streams, n uint64) ports.StreamInfo {
	t.Helper()
	return mustCreateStream(ctx, t, s, "/s", textPlain, numbered(0, n)...)
}

// expectPage checks a page holds the numbered records [from, next).
func expectPage(t *testing.T, page ports.ReadResult, from, next uint64) {
	t.Helper()
	if got, want := bodiesOf(page.Records), numbered(from, next); page.From != from || page.Next != next || !slices.Equal(got, want) {
		t.Fatalf("page [%d, %d) holds %q, want [%d, %d) holding %q", page.From, page.Next, got, from, next, want)
	}
}

func testReadFrom(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	info := createNumbered(ctx, t, s, 5)
	page := mustReadStream(ctx, t, s, "/s", 2, ports.ReadLimits{})
	expectPage(t, page, 2, 5)
	if page.Tail != 5 || !page.UpToDate || page.Closed || page.ID != info.ID || page.Config.ContentType != "text/plain" {
		t.Fatalf("Read from 2 of 5 = %+v, want tail 5, up to date, open, stream %d text/plain", page, info.ID)
	}
}

func testReadCount(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	createNumbered(ctx, t, s, 5)
	var got []string
	for from, pages := uint64(0), 0; from < 5 && pages < 5; pages++ {
		page := mustReadStream(ctx, t, s, "/s", from, ports.ReadLimits{Count: 2})
		n := uint64(len(page.Records))
		if n < 1 || n > 2 || page.From != from || page.Tail != 5 || page.UpToDate != (page.Next == 5) {
			t.Fatalf("Read(%d, count 2) = %+v, want 1 or 2 records from %d of 5", from, page, from)
		}
		expectPage(t, page, from, from+n)
		got, from = append(got, bodiesOf(page.Records)...), page.Next
	}
	if want := numbered(0, 5); !slices.Equal(got, want) {
		t.Fatalf("pages of 2 hold %q, want %q", got, want)
	}
}

func testReadBytes(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	ten := []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "9876543210"}
	mustCreateStream(ctx, t, s, "/s", textPlain, ten...)
	page := mustReadStream(ctx, t, s, "/s", 0, ports.ReadLimits{Bytes: 1})
	if got := bodiesOf(page.Records); !slices.Equal(got, ten[:1]) || page.Next != 1 || page.UpToDate {
		t.Fatalf("Read of 1 byte = %q next %d, want the first record alone", got, page.Next)
	}
	page = mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{Bytes: 15})
	if n := len(page.Records); n < 1 || n > 2 || !slices.Equal(bodiesOf(page.Records), ten[1:1+n]) || page.Next != uint64(1+n) {
		t.Fatalf("Read of about 15 bytes of 10-byte records = %q next %d, want 1 or 2 records from 1", bodiesOf(page.Records), page.Next)
	}
	page = mustReadStream(ctx, t, s, "/s", 0, ports.ReadLimits{Count: 1, Bytes: 1000})
	if len(page.Records) != 1 {
		t.Fatalf("Read of count 1 = %d records", len(page.Records))
	}
}

func testReadBeyondTail(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	createNumbered(ctx, t, s, 2)
	_, err := s.Read(ctx, "/s", 3, ports.ReadLimits{})
	expectErrorIs(t, err, ports.ErrBadRequest, "Read from 3 at tail 2")
	page := mustReadStream(ctx, t, s, "/s", 2, ports.ReadLimits{})
	if len(page.Records) != 0 || page.From != 2 || page.Next != 2 || page.Tail != 2 || !page.UpToDate {
		t.Fatalf("Read at the tail = %+v, want an empty page at 2, up to date", page)
	}
}

// A caught-up reader waits on Changed; after it closes, the read from the
// page's Next returns the new record.
func testChangedOnAppend(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	createNumbered(ctx, t, s, 1)
	page := mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{})
	expectUnchanged(t, page.Changed, "before any append")
	mustAppendBodies(ctx, t, s, "/s", "r1")
	expectChanged(ctx, t, page.Changed, "an append")
	expectPage(t, mustReadStream(ctx, t, s, "/s", page.Next, ports.ReadLimits{}), 1, 2)
}

func testChangedOnClose(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	createNumbered(ctx, t, s, 1)
	page := mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{})
	if page.Closed {
		t.Fatalf("Read of an open stream says closed")
	}
	mustAppend(ctx, t, s, "/s", ports.AppendRequest{Close: true})
	expectChanged(ctx, t, page.Changed, "a close without records")
	if page := mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{}); !page.Closed || len(page.Records) != 0 {
		t.Fatalf("Read after the close = %+v, want closed and empty", page)
	}
}

func testChangedOnDelete(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	createNumbered(ctx, t, s, 1)
	page := mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{})
	if err := s.Delete(ctx, "/s"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	expectChanged(ctx, t, page.Changed, "a delete")
}

func testReadTail(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	info := createNumbered(ctx, t, s, 2)
	page, err := s.ReadTail(ctx, "/s")
	if err != nil || len(page.Records) != 0 || page.From != 2 || page.Next != 2 || page.Tail != 2 || !page.UpToDate || page.Closed || page.ID != info.ID {
		t.Fatalf("ReadTail = %+v, %v; want an empty open page at tail 2 of stream %d", page, err, info.ID)
	}
	expectUnchanged(t, page.Changed, "before any append")
	mustAppendBodies(ctx, t, s, "/s", "r2")
	expectChanged(ctx, t, page.Changed, "an append")
	mustAppend(ctx, t, s, "/s", ports.AppendRequest{Close: true})
	if page, err := s.ReadTail(ctx, "/s"); err != nil || page.Next != 3 || len(page.Records) != 0 || !page.Closed {
		t.Fatalf("ReadTail of a closed stream = %+v, %v; want an empty closed page at 3", page, err)
	}
}

func testHead(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	info := createNumbered(ctx, t, s, 2)
	head := mustHeadStream(ctx, t, s, "/s")
	if head.ID != info.ID || head.Name != "/s" || head.Start != 0 || head.Next != 2 || head.Closed || head.Config.ContentType != "text/plain" {
		t.Fatalf("Head = %+v, want stream %d /s text/plain [0, 2) open", head, info.ID)
	}
	mustAppendBodies(ctx, t, s, "/s", "r2")
	mustAppend(ctx, t, s, "/s", ports.AppendRequest{Close: true})
	if head := mustHeadStream(ctx, t, s, "/s"); head.Next != 3 || !head.Closed || head.ID != info.ID {
		t.Fatalf("Head after an append and a close = %+v, want closed at next 3", head)
	}
}

// Trim promises an effective start no higher than asked for or than the
// tail, never going back, reported by Head, and reads from below it that
// begin at or above it. How far it gets is the implementation's (the
// service trims only what is committed to data objects).
func testTrim(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	createNumbered(ctx, t, s, 6)
	start := mustTrim(ctx, t, s, 3, 0, 3)
	for _, seq := range []uint64{2, 100} {
		start = mustTrim(ctx, t, s, seq, start, min(max(seq, start), 6))
	}
	page := mustReadStream(ctx, t, s, "/s", 0, ports.ReadLimits{})
	if page.From < start {
		t.Fatalf("Read from 0 after a trim to %d begins at %d", start, page.From)
	}
	expectPage(t, page, page.From, 6)
	if res := mustAppendBodies(ctx, t, s, "/s", "r6"); res.First != 6 {
		t.Fatalf("Append after trims = %+v, want first 6", res)
	}
}

// mustTrim trims /s to seq and checks the start it reports is in [low,
// high] and is Head's.
func mustTrim(ctx context.Context, t *testing.T, s ports.Streams, seq, low, high uint64) uint64 {
	t.Helper()
	start, err := s.Trim(ctx, "/s", seq)
	if err != nil || start < low || start > high {
		t.Fatalf("Trim(%d) = %d, %v; want a start in [%d, %d]", seq, start, err, low, high)
	}
	if head := mustHeadStream(ctx, t, s, "/s"); head.Start != start || head.Next != 6 {
		t.Fatalf("Head after Trim(%d) = %+v, want start %d, next 6", seq, head, start)
	}
	return start
}
