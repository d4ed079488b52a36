package conformance

import (
	"testing"

	"github.com/picomq/pico/ports"
)

func streamsConditionCases(t *testing.T, open StreamsOpener) {
	t.Run("MatchNextIsAConditionalAppend", func(t *testing.T) { testMatchNext(t, open) })
	t.Run("WriterSeqMustRiseBytewise", func(t *testing.T) { testWriterSeq(t, open) })
	t.Run("WriterSeqOfAProducerRetryIsADuplicate", func(t *testing.T) { testWriterSeqRetry(t, open) })
}

func testMatchNext(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain, "a")
	for _, wrong := range []uint64{0, 2} {
		_, err := s.Append(ctx, "/s", ports.AppendRequest{Records: records("x"), MatchNext: &wrong})
		se := expectStreamError(t, err, ports.ErrMatchFailed, "Append matching the wrong tail")
		if !se.HasNext || se.Next != 1 {
			t.Fatalf("Append matching tail %d at tail 1: %+v, want next 1 reported", wrong, se)
		}
	}
	right := uint64(1)
	if res := mustAppend(ctx, t, s, "/s", ports.AppendRequest{Records: records("b"), MatchNext: &right}); res.First != 1 || res.Next != 2 {
		t.Fatalf("Append matching the tail = %+v, want [1, 2)", res)
	}
	expectBodies(ctx, t, s, "/s", "a", "b")
}

func testWriterSeq(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	for _, seq := range []string{"09", "10"} {
		mustAppend(ctx, t, s, "/s", ports.AppendRequest{Records: records(seq), WriterSeq: seq})
	}
	for _, seq := range []string{"10", "1", "09"} { // "1" is below "10" bytewise
		_, err := s.Append(ctx, "/s", ports.AppendRequest{Records: records("x"), WriterSeq: seq})
		if se := expectStreamError(t, err, ports.ErrWriterSeq, "Append with writer seq "+seq+" after 10"); se.Verdict().LastWriterSeq != "10" {
			t.Fatalf("writer seq %s after 10: %+v, want the last accepted 10 reported", seq, se)
		}
	}
	mustAppend(ctx, t, s, "/s", ports.AppendRequest{Records: records("2"), WriterSeq: "2"}) // "2" is above "10"
	mustAppendBodies(ctx, t, s, "/s", "none")
	expectBodies(ctx, t, s, "/s", "09", "10", "2", "none")
}

// The producer stamp is checked before the writer sequence, so a retry is
// a duplicate and not a regression.
func testWriterSeqRetry(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	req := ports.AppendRequest{Records: records("a"), Producer: stamp("p", 1, 0), WriterSeq: "a"}
	mustAppend(ctx, t, s, "/s", req)
	if res, err := s.Append(ctx, "/s", req); err != nil || !res.Duplicate || res.First != 0 || res.Next != 1 {
		t.Fatalf("retry with the same writer seq = %+v, %v; want a duplicate of [0, 1)", res, err)
	}
	expectBodies(ctx, t, s, "/s", "a")
}
