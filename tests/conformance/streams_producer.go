package conformance

import (
	"context"
	"sync"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsProducerCases(t *testing.T, open StreamsOpener) {
	t.Run("ProducerRetryIsADuplicate", func(t *testing.T) { testProducerRetry(t, open) })
	t.Run("ProducerRetryOfAnEarlierRequestWritesNothing", func(t *testing.T) { testProducerOlderRetry(t, open) })
	t.Run("ProducerGapIsRefused", func(t *testing.T) { testProducerGap(t, open) })
	t.Run("ProducerStaleEpochIsFenced", func(t *testing.T) { testProducerFenced(t, open) })
	t.Run("ProducerNewEpochStartsAtZero", func(t *testing.T) { testProducerNewEpoch(t, open) })
	t.Run("ConcurrentProducerRetriesWriteOnce", func(t *testing.T) { testProducerRetryRace(t, open) })
}

func stamp(id string, epoch, seq uint64) *domain.ProducerStamp {
	return &domain.ProducerStamp{ID: id, Epoch: epoch, Seq: seq}
}

func produce(ctx context.Context, s ports.Streams, name string, p *domain.ProducerStamp, bodies ...string) (ports.AppendResult, error) {
	return s.Append(ctx, name, ports.AppendRequest{Records: records(bodies...), Producer: p})
}

func mustProduce(ctx context.Context, t *testing.T, s ports.Streams, name string, p *domain.ProducerStamp, bodies ...string) ports.AppendResult {
	t.Helper()
	res, err := produce(ctx, s, name, p, bodies...)
	if err != nil || res.Duplicate {
		t.Fatalf("Append by producer %+v = %+v, %v; want it written", *p, res, err)
	}
	return res
}

// A retry answers the original's offsets, even once the tail has moved on,
// and writes nothing; other producers are not affected.
func testProducerRetry(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	first := mustProduce(ctx, t, s, "/s", stamp("p", 1, 0), "a", "b")
	if first.First != 0 || first.Next != 2 || first.ProducerSeq != 0 {
		t.Fatalf("first producer append = %+v, want [0, 2) at seq 0", first)
	}
	mustAppendBodies(ctx, t, s, "/s", "x")
	mustProduce(ctx, t, s, "/s", stamp("q", 1, 0), "q0")
	res, err := produce(ctx, s, "/s", stamp("p", 1, 0), "a", "b")
	if err != nil || !res.Duplicate || res.First != 0 || res.Next != 2 || res.ProducerSeq != 0 {
		t.Fatalf("retry of seq 0 = %+v, %v; want a duplicate of [0, 2) at seq 0", res, err)
	}
	if next := mustProduce(ctx, t, s, "/s", stamp("p", 1, 1), "c"); next.First != 4 || next.Next != 5 || next.ProducerSeq != 1 {
		t.Fatalf("seq 1 after the retry = %+v, want [4, 5) at seq 1", next)
	}
	expectBodies(ctx, t, s, "/s", "a", "b", "x", "q0", "c")
}

// A retry of a request before the producer's last is a duplicate too, and
// echoes the last accepted sequence. Its offsets are not checked: the
// service remembers those of each producer's last request only.
func testProducerOlderRetry(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 0), "a")
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 1), "b")
	res, err := produce(ctx, s, "/s", stamp("p", 1, 0), "a")
	if err != nil || !res.Duplicate || res.ProducerSeq != 1 {
		t.Fatalf("retry of seq 0 after seq 1 = %+v, %v; want a duplicate echoing seq 1", res, err)
	}
	expectBodies(ctx, t, s, "/s", "a", "b")
}

func testProducerGap(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	_, err := produce(ctx, s, "/s", stamp("p", 1, 3), "a")
	se := expectStreamError(t, err, ports.ErrProducerGap, "an unknown producer starting at seq 3")
	if se.Verdict().Expected != 0 || se.Verdict().Received != 3 || se.Verdict().NewEpoch {
		t.Fatalf("an unknown producer starting at seq 3: %+v, want expected 0, received 3, not a new epoch", se)
	}
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 0), "a")
	_, err = produce(ctx, s, "/s", stamp("p", 1, 2), "c")
	se = expectStreamError(t, err, ports.ErrProducerGap, "seq 2 after seq 0")
	if se.Verdict().Expected != 1 || se.Verdict().Received != 2 || se.Verdict().NewEpoch {
		t.Fatalf("seq 2 after seq 0: %+v, want expected 1, received 2", se)
	}
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 1), "b")
	expectBodies(ctx, t, s, "/s", "a", "b")
}

func testProducerFenced(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 0), "a")
	mustProduce(ctx, t, s, "/s", stamp("p", 2, 0), "b")
	for _, seq := range []uint64{0, 1} {
		_, err := produce(ctx, s, "/s", stamp("p", 1, seq), "stale")
		if se := expectStreamError(t, err, ports.ErrProducerFenced, "Append at a stale producer epoch"); se.Verdict().Epoch != 2 {
			t.Fatalf("Append at epoch 1 after epoch 2: %+v, want the current epoch 2", se)
		}
	}
	expectBodies(ctx, t, s, "/s", "a", "b")
}

func testProducerNewEpoch(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 0), "a")
	mustProduce(ctx, t, s, "/s", stamp("p", 1, 1), "b")
	_, err := produce(ctx, s, "/s", stamp("p", 2, 2), "c")
	se := expectStreamError(t, err, ports.ErrProducerGap, "a new epoch starting at seq 2")
	if se.Verdict().Expected != 0 || se.Verdict().Received != 2 || !se.Verdict().NewEpoch {
		t.Fatalf("a new epoch starting at seq 2: %+v, want expected 0, received 2, a new epoch", se)
	}
	if res := mustProduce(ctx, t, s, "/s", stamp("p", 2, 0), "c"); res.First != 2 || res.ProducerSeq != 0 {
		t.Fatalf("a new epoch at seq 0 = %+v, want first 2 at seq 0", res)
	}
	expectBodies(ctx, t, s, "/s", "a", "b", "c")
}

// Retries racing each other write the records once; every one is answered
// with the same offsets.
func testProducerRetryRace(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	const senders = 8
	results, errs := make([]ports.AppendResult, senders), make([]error, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() { results[i], errs[i] = produce(ctx, s, "/s", stamp("p", 1, 0), "a") })
	}
	wg.Wait()
	written := 0
	for i, res := range results {
		if errs[i] != nil || res.First != 0 || res.Next != 1 {
			t.Fatalf("sender %d: %+v, %v; want [0, 1)", i, res, errs[i])
		}
		if !res.Duplicate {
			written++
		}
	}
	if written != 1 {
		t.Fatalf("%d of %d identical requests were answered as written, want 1", written, senders)
	}
	expectBodies(ctx, t, s, "/s", "a")
}
