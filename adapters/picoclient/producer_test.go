package picoclient

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestProducerWritesEachRecordOnceInOrder appends random records through a
// producer with random bounds to a stream that refuses requests, delays
// them and loses answers after writing: every record must be acknowledged
// and in the stream exactly once, in the order appended, at the seq its
// acknowledgement names.
func TestProducerWritesEachRecordOnceInOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		refuse := rapid.Float64Range(0, 0.3).Draw(rt, "refuse")
		lose := rapid.Float64Range(0, 0.3).Draw(rt, "lose")
		seed := rapid.Uint64().Draw(rt, "seed")
		rng, sizes := newTestRand(seed), newTestRand(seed+1) // one for the server's goroutines, one for the test's
		f, c := newFakeStream(t, func() (fault, time.Duration) {
			delay := time.Duration(rng.n(500)) * time.Microsecond
			switch x := rng.float(); {
			case x < refuse:
				return faultRefuse, delay
			case x < refuse+lose:
				return faultLoseReply, delay
			}
			return faultNone, delay
		})
		p := c.NewProducer("/s", ProducerOptions{
			Linger:          time.Duration(rapid.IntRange(0, 2000).Draw(rt, "lingerµs")) * time.Microsecond,
			MaxBatchRecords: rapid.IntRange(1, 20).Draw(rt, "maxRecords"),
			MaxBatchBytes:   rapid.IntRange(64, 512).Draw(rt, "maxBytes"),
			MaxInFlight:     rapid.IntRange(1, 5).Draw(rt, "inFlight"),
			MaxBackoff:      time.Millisecond,
		})
		n := rapid.IntRange(1, 100).Draw(rt, "records")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var want []string
		var acks []*Ack
		for i := range n {
			body := fmt.Sprintf("r%d-%s", i, make([]byte, sizes.n(24)))
			ack, err := p.Append(ctx, Record{Body: []byte(body)})
			if err != nil {
				rt.Fatalf("append %d: %v", i, err)
			}
			want, acks = append(want, body), append(acks, ack)
		}
		if err := p.Close(ctx); err != nil {
			rt.Fatalf("close: %v", err)
		}
		got := f.bodies()
		if !slices.Equal(got, want) {
			rt.Fatalf("stream holds %d records, appended %d:\n got %q\nwant %q", len(got), len(want), got, want)
		}
		for i, ack := range acks {
			if err := ack.Wait(ctx); err != nil {
				rt.Fatalf("record %d: %v", i, err)
			}
			if seq, ok := ack.Seq(); ok && got[seq] != want[i] {
				rt.Fatalf("record %d acknowledged at seq %d, which holds %q", i, seq, got[seq])
			}
		}
	})
}

// TestProducerSeqIsKnownAfterALostAnswer checks the one lost answer the
// producer can place: a repeat of its last batch.
func TestProducerSeqIsKnownAfterALostAnswer(t *testing.T) {
	answers := 0
	f, c := newFakeStream(t, func() (fault, time.Duration) {
		answers++
		if answers == 2 {
			return faultLoseReply, 0
		}
		return faultNone, 0
	})
	p := c.NewProducer("/s", ProducerOptions{MaxInFlight: 1, MaxBatchRecords: 2})
	ctx := t.Context()
	var acks []*Ack
	for i := range 4 {
		ack, err := p.Append(ctx, Record{Body: fmt.Appendf(nil, "r%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, ack)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.bodies(); !slices.Equal(got, []string{"r0", "r1", "r2", "r3"}) {
		t.Fatalf("stream %q", got)
	}
	for i, ack := range acks {
		if seq, ok := ack.Seq(); !ok || seq != uint64(i) {
			t.Fatalf("record %d: seq %d known %v", i, seq, ok)
		}
	}
}

// TestProducerFencedFailsItsPendingRecords has a second producer with the
// same id and a higher epoch take the stream: the first fails with
// ErrFenced, for its pending records and for later appends.
func TestProducerFencedFailsItsPendingRecords(t *testing.T) {
	f, c := newFakeStream(t, nil)
	ctx := t.Context()
	old := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 1, MaxInFlight: 1})
	mustAppendAll(t, old, "a")
	next := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 2})
	mustAppendAll(t, next, "b")
	ack, err := old.Append(ctx, Record{Body: []byte("zombie")})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Flush(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("flush of a fenced producer: %v, want ErrFenced", err)
	}
	if err := ack.Wait(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("pending record: %v, want ErrFenced", err)
	}
	if _, err := old.Append(ctx, Record{Body: []byte("later")}); !errors.Is(err, ErrFenced) {
		t.Fatalf("append after the fence: %v, want ErrFenced", err)
	}
	if got := f.bodies(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("stream %q", got)
	}
}

// TestProducerClaimsOnFence is the same takeover with ClaimOnFence: the
// first producer moves above the second's epoch and writes its records.
func TestProducerClaimsOnFence(t *testing.T) {
	f, c := newFakeStream(t, nil)
	first := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 1, ClaimOnFence: true})
	mustAppendAll(t, first, "a")
	second := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 5})
	mustAppendAll(t, second, "b")
	mustAppendAll(t, first, "c", "d")
	if first.Epoch() != 6 {
		t.Fatalf("epoch after the claim %d, want 6", first.Epoch())
	}
	if got := f.bodies(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("stream %q", got)
	}
}

func TestProducerOnAClosedStreamFailsWithErrClosed(t *testing.T) {
	f, c := newFakeStream(t, nil)
	f.seal()
	p := c.NewProducer("/s", ProducerOptions{})
	ack, err := p.Append(t.Context(), Record{Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if err := ack.Wait(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("append to a closed stream: %v, want ErrClosed", err)
	}
	var api *APIError
	if !errors.As(p.Close(t.Context()), &api) || api.Status != 409 {
		t.Fatalf("close: want the 409 *APIError")
	}
}

func TestProducerRefusesARecordOverItsBatchBound(t *testing.T) {
	_, c := newFakeStream(t, nil)
	p := c.NewProducer("/s", ProducerOptions{MaxBatchBytes: 100})
	if _, err := p.Append(t.Context(), Record{Body: make([]byte, 200)}); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("oversize record: %v", err)
	}
}

// TestProducerCloseGivesUpAtItsDeadline: with the node refusing forever,
// Close returns at its context's end and the record fails.
func TestProducerCloseGivesUpAtItsDeadline(t *testing.T) {
	_, c := newFakeStream(t, func() (fault, time.Duration) { return faultRefuse, 0 })
	p := c.NewProducer("/s", ProducerOptions{MaxBackoff: 5 * time.Millisecond})
	ack, err := p.Append(t.Context(), Record{Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("close: %v", err)
	}
	if err := ack.Wait(t.Context()); err == nil {
		t.Fatal("a record never written was acknowledged")
	}
}

func mustAppendAll(t *testing.T, p *Producer, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := p.Append(t.Context(), Record{Body: []byte(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// testRand is a small deterministic generator, so that a failing rapid
// case replays its faults.
type testRand struct{ s uint64 }

func newTestRand(seed uint64) *testRand { return &testRand{s: seed | 1} }

func (r *testRand) next() uint64 {
	r.s ^= r.s << 13
	r.s ^= r.s >> 7
	r.s ^= r.s << 17
	return r.s
}

func (r *testRand) n(k int) int    { return int(r.next() % uint64(k)) }
func (r *testRand) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// A producer sends each record's key, the empty key as a key.
func TestProducerSendsKeys(t *testing.T) {
	f, c := newFakeStream(t, nil)
	p := c.NewProducer("/s", ProducerOptions{MaxBatchRecords: 3})
	keys := [][]byte{[]byte("a"), nil, {}, []byte{0xff}}
	for i, k := range keys {
		if _, err := p.Append(t.Context(), Record{Key: k, Body: []byte{byte('0' + i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.records {
		if !reflect.DeepEqual(r.Key, keys[i]) {
			t.Errorf("record %d has key %#v, want %#v", i, r.Key, keys[i])
		}
	}
	if len(f.records) != len(keys) {
		t.Fatalf("%d records written, want %d", len(f.records), len(keys))
	}
}
