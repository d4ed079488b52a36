package wal

import (
	"context"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// gatedStore lets each PutIfAbsent through when the test sends it a
// duration, which the put then takes.
type gatedStore struct {
	ports.ObjectStore
	gate chan time.Duration
}

func (s *gatedStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	time.Sleep(<-s.gate)
	return s.ObjectStore.PutIfAbsent(ctx, key, body)
}

// release lets the next PUT through, taking d, failing the test if none
// comes within 10 s.
func release(t *testing.T, store *gatedStore, d time.Duration) {
	t.Helper()
	select {
	case store.gate <- d:
	case <-time.After(10 * time.Second):
		t.Fatal("no PUT came within 10 s")
	}
}

// submitAsync submits f and returns the channel its outcome arrives on.
func submitAsync(t *testing.T, w *WAL, f *domain.Frame) chan error {
	t.Helper()
	done := make(chan error, 1)
	if err := w.Submit(f, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	return done
}

// inFlight reads, under the WAL's lock (so after any completion in progress
// has decided what to seal), the uploads in flight and whether a linger
// holds the draft.
func inFlight(w *WAL) (uploads int, lingering bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inflight, w.linger.active
}

func mustAck(t *testing.T, what string, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not acknowledged", what)
	}
}

// lingerWAL is a WAL on a gated store whose PUTs have taken putLatency of
// late (so a linger lasts about that long), with appender a's frame in
// flight and b's and c's waiting for it.
func lingerWAL(t *testing.T, cfg Config, putLatency time.Duration) (w *WAL, store *gatedStore, a, b, c chan error) {
	t.Helper()
	store = &gatedStore{ObjectStore: memstore.New(), gate: make(chan time.Duration)}
	cfg.Store, cfg.Node, cfg.Epoch = store, 1, 1
	if cfg.MaxLinger == 0 {
		cfg.MaxLinger = time.Hour
	}
	if cfg.Pipeline == 0 {
		cfg.Pipeline = 1 // the pacer caps a linger (pacer_test.go)
	}
	w = Open(cfg)
	t.Cleanup(func() {
		close(store.gate)
		closeWithin(t, w)
	})
	w.mu.Lock()
	w.linger.putLatency = putLatency
	w.mu.Unlock()
	a = submitAsync(t, w, frame(1, 0, "a"))
	b, c = submitAsync(t, w, frame(2, 0, "b")), submitAsync(t, w, frame(3, 0, "c"))
	return w, store, a, b, c
}

// lingerStart lets a's bulk through: a is acknowledged and the next bulk
// (b, c) waits for it.
func lingerStart(t *testing.T, putLatency time.Duration) (w *WAL, store *gatedStore, b, c chan error) {
	t.Helper()
	w, store, a, b, c := lingerWAL(t, Config{}, putLatency)
	release(t, store, 0)
	mustAck(t, "a", a)
	if uploads, lingering := inFlight(w); uploads != 0 || !lingering {
		t.Fatalf("after a's bulk: %d uploads in flight, lingering %v; want b and c held back", uploads, lingering)
	}
	return w, store, b, c
}

// An appender acknowledged by one bulk that comes straight back joins the
// next bulk instead of waiting for it to be stored first.
func TestLingerMergesTheAppendersJustAcknowledged(t *testing.T) {
	w, store, b, c := lingerStart(t, time.Hour)
	a := submitAsync(t, w, frame(1, 1, "a2"))
	if uploads, _ := inFlight(w); uploads != 1 {
		t.Fatalf("with everyone back, %d uploads in flight, want the next bulk sealed at once", uploads)
	}
	release(t, store, 0)
	for name, done := range map[string]chan error{"a2": a, "b": b, "c": c} {
		mustAck(t, name, done)
	}
	if st := w.Stats(); st.Puts != 2 || st.Submissions != 4 {
		t.Fatalf("%d frames in %d puts, want a alone, then a2, b and c together", st.Submissions, st.Puts)
	}
}

// When the acknowledged appenders do not come back, the wait ends after
// about two PUTs' time, and the draft leaves.
func TestLingerEndsAfterTwoPutTimes(t *testing.T) {
	// The wait began between before and after: from after, more than one
	// PUT latency of it is left (the set-up takes far less than 200 ms).
	before := time.Now()
	w, store, b, c := lingerStart(t, 200*time.Millisecond)
	after := time.Now()
	w.mu.Lock()
	until, putLatency := w.linger.until, w.linger.putLatency
	w.mu.Unlock()
	if until.Sub(after) <= putLatency || until.Sub(before) > 2*putLatency+time.Second {
		t.Fatalf("the wait ends %v after it began at the latest, want two PUT latencies (%v)", until.Sub(before), 2*putLatency)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if uploads, _ := inFlight(w); uploads == 1 {
			break // the wait timed out and sealed b and c
		}
		if time.Now().After(deadline) {
			t.Fatal("b and c still held back 10 s after a's bulk")
		}
	}
	release(t, store, 0)
	mustAck(t, "b", b)
	mustAck(t, "c", c)
	if st := w.Stats(); st.Puts != 2 || st.Submissions != 3 {
		t.Fatalf("%d frames in %d puts, want a alone, then b and c", st.Submissions, st.Puts)
	}
}

// A lone appender is everyone a linger waits for: its next frame leaves at
// once.
func TestLingerNeverHoldsALoneAppender(t *testing.T) {
	store := &gatedStore{ObjectStore: memstore.New(), gate: make(chan time.Duration)}
	w := Open(Config{Store: store, Node: 1, Epoch: 1, MaxLinger: time.Hour})
	defer func() {
		close(store.gate)
		closeWithin(t, w)
	}()
	for i := range 3 {
		done := submitAsync(t, w, frame(1, uint64(i), "x"))
		if uploads, _ := inFlight(w); uploads != 1 {
			t.Fatalf("lone append %d: %d uploads in flight, want its bulk sealed at once", i, uploads)
		}
		release(t, store, 50*time.Millisecond)
		mustAck(t, "lone append", done)
	}
}

// A submitter waiting for buffer room may be one the draft waits for: the
// draft leaves at once rather than when the wait times out.
func TestLingerLetsTheDraftGoForASubmitterWaitingForRoom(t *testing.T) {
	w, store, b, c := lingerStart(t, time.Hour)
	w.mu.Lock()
	w.cfg.MaxBufferedBytes = w.buffered + 1 // b and c fill it
	w.mu.Unlock()
	big := make(chan error, 1)
	go func() { big <- w.Submit(frame(1, 1, "a2"), func(error) {}) }()
	release(t, store, 0) // the draft's PUT: only once it is sealed
	mustAck(t, "b", b)
	mustAck(t, "c", c)
	mustAck(t, "the submission waiting for room", big)
}

// A draft that reached MaxBulkBytes while the only upload allowed was in
// flight leaves as soon as that upload completes.
func TestLingerNeverHoldsAFullBulk(t *testing.T) {
	w, store, a, _, _ := lingerWAL(t, Config{MaxBulkBytes: 1, MaxInFlight: 1}, time.Hour)
	release(t, store, 0)
	mustAck(t, "a", a)
	if uploads, lingering := inFlight(w); uploads != 1 || lingering {
		t.Fatalf("after a's bulk: %d uploads in flight, lingering %v; want the full draft sent", uploads, lingering)
	}
}

// Close sends what is buffered as soon as it can, without lingers.
func TestCloseDoesNotLinger(t *testing.T) {
	w, store, a, _, _ := lingerWAL(t, Config{MaxInFlight: 1}, time.Hour)
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		w.mu.Lock()
		closing := w.closing
		w.mu.Unlock()
		if closing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close did not start")
		}
	}
	release(t, store, 0)
	mustAck(t, "a", a)
	if uploads, lingering := inFlight(w); uploads != 1 || lingering {
		t.Fatalf("closing, after a's bulk: %d uploads in flight, lingering %v; want b and c sent", uploads, lingering)
	}
	release(t, store, 0)
	mustAck(t, "Close", closed)
}

// closeWithin closes w, failing the test if that takes 10 s.
func closeWithin(t *testing.T, w *WAL) {
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Error("Close still waiting after 10 s")
	}
}
