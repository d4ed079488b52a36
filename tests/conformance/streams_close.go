package conformance

import (
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsCloseCases(t *testing.T, open StreamsOpener) {
	t.Run("AppendAfterCloseIsRefused", func(t *testing.T) { testCloseRefuses(t, open) })
	t.Run("CloseAgainWithoutRecordsIsIdempotent", func(t *testing.T) { testCloseAgain(t, open) })
	t.Run("ProducerRetryOfTheCloseIsADuplicate", func(t *testing.T) { testCloseRetry(t, open) })
	t.Run("ClosedAnswersBeforeAContentTypeMismatch", func(t *testing.T) { testClosedFirst(t, open) })
	t.Run("WaitingReaderGetsTheClosingAppendClosed", func(t *testing.T) { testCloseReachesWaitingReader(t, open) })
}

func testCloseRefuses(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	res := mustAppend(ctx, t, s, "/s", ports.AppendRequest{Records: records("b"), Close: true})
	if res.First != 1 || res.Next != 2 || !res.Closed {
		t.Fatalf("Append and close = %+v, want [1, 2) closed", res)
	}
	for _, req := range []ports.AppendRequest{
		{Records: records("c")},
		{Records: records("c"), Close: true},
		{Records: records("c"), Producer: stamp("p", 1, 0)},
	} {
		_, err := s.Append(ctx, "/s", req)
		if se := expectStreamError(t, err, ports.ErrStreamClosed, "Append after close"); !se.Closed || !se.HasNext || se.Next != 2 {
			t.Fatalf("Append %+v after close: %+v, want closed at next 2", req, se)
		}
	}
	if head := mustHeadStream(ctx, t, s, "/s"); !head.Closed || head.Next != 2 {
		t.Fatalf("Head after close = %+v, want closed at next 2", head)
	}
	if page := mustReadStream(ctx, t, s, "/s", 0, ports.ReadLimits{}); !page.Closed || !page.UpToDate {
		t.Fatalf("Read to the end of a closed stream = %+v, want closed and up to date", page)
	}
	expectBodies(ctx, t, s, "/s", "a", "b")
}

func testCloseAgain(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	for i := range 2 {
		res := mustAppend(ctx, t, s, "/s", ports.AppendRequest{Close: true})
		if res.First != 1 || res.Next != 1 || !res.Closed {
			t.Fatalf("close %d without records = %+v, want closed with nothing written at 1", i+1, res)
		}
	}
	expectBodies(ctx, t, s, "/s", "a")
}

// The retry of the request that closed the stream is acknowledged as a
// duplicate; the retry of an earlier one is a duplicate that says it is
// not the close (RepeatsClose false); a close stamped by any other
// request is refused.
func testCloseRetry(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 0), "a")
	closing := ports.AppendRequest{Records: records("b"), Producer: stamp("p", 1, 1), Close: true}
	mustAppend(ctx, t, s, "/s", closing)
	res, err := s.Append(ctx, "/s", closing)
	if err != nil || !res.Duplicate || !res.Closed || !res.RepeatsClose || res.First != 1 || res.Next != 2 {
		t.Fatalf("retry of the closing append = %+v, %v; want a closed duplicate of [1, 2), the close", res, err)
	}
	res, err = produce(ctx, s, "/s", stamp("p", 1, 0), "a")
	if err != nil || !res.Duplicate || !res.Closed || res.RepeatsClose {
		t.Fatalf("retry of the append before the close = %+v, %v; want a closed duplicate, not the close", res, err)
	}
	// A close without records stamped by another request is refused; one
	// without a stamp is a close again.
	for _, p := range []*domain.ProducerStamp{stamp("q", 0, 0), stamp("p", 1, 2), stamp("p", 2, 0)} {
		_, err := s.Append(ctx, "/s", ports.AppendRequest{Producer: p, Close: true})
		if se := expectStreamError(t, err, ports.ErrStreamClosed, "Another producer's close of a closed stream"); !se.Closed || se.Next != 2 {
			t.Fatalf("close by %+v of a stream another request closed: %+v, want closed at next 2", *p, se)
		}
	}
	if res := mustAppend(ctx, t, s, "/s", ports.AppendRequest{Close: true}); !res.Closed || res.Next != 2 {
		t.Fatalf("close without a producer of a closed stream = %+v, want closed at 2", res)
	}
	expectBodies(ctx, t, s, "/s", "a", "b")
}

// A closed stream answers closed whatever an append's content type.
func testClosedFirst(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	mustAppend(ctx, t, s, "/s", ports.AppendRequest{Close: true})
	_, err := s.Append(ctx, "/s", ports.AppendRequest{Records: records("{}"), ContentType: "application/json"})
	if se := expectStreamError(t, err, ports.ErrStreamClosed, "Append of another content type to a closed stream"); !se.Closed || se.Next != 1 {
		t.Fatalf("Append of another content type to a closed stream: %+v, want closed at next 1", se)
	}
}

// A reader waiting at the tail when an append closes the stream gets its
// records and the closure from the same read, whichever wake-up it reads
// at: never the records alone, with the closure left for a later one.
func testCloseReachesWaitingReader(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	page := mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{})
	appended := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "/s", ports.AppendRequest{Records: records("final"), Close: true})
		appended <- err
	}()
	for !page.Closed {
		select {
		case <-page.Changed:
		case <-ctx.Done():
			t.Fatalf("no wake-up with the closure; last page %+v", page)
		}
		page = mustReadStream(ctx, t, s, "/s", 1, ports.ReadLimits{})
		if len(page.Records) > 0 && !page.Closed {
			t.Fatalf("the closing append's records reached a waiting reader without the closure: %+v", page)
		}
	}
	if len(page.Records) != 1 || string(page.Records[0].Body) != "final" || page.Next != 2 || !page.UpToDate {
		t.Fatalf("closed page %+v, want the closing append's record, up to date at 2", page)
	}
	if err := <-appended; err != nil {
		t.Fatalf("append and close: %v", err)
	}
}
