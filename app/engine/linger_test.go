package engine

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

// lingerStart has appender a's frame in flight and b's and c's waiting,
// then lets a's bulk through, taking putTime: a is acknowledged and the
// next bulk (b, c) waits for it.
func lingerStart(t *testing.T, putTime time.Duration) (w *WAL, store *gatedStore, b, c chan error) {
	t.Helper()
	store = &gatedStore{ObjectStore: memstore.New(), gate: make(chan time.Duration)}
	w = OpenWAL(WALConfig{Store: store, Node: 1, Epoch: 1, MaxLinger: time.Hour})
	t.Cleanup(func() {
		close(store.gate)
		w.Close()
	})
	a := submitAsync(t, w, frame(1, 0, "a"))
	b, c = submitAsync(t, w, frame(2, 0, "b")), submitAsync(t, w, frame(3, 0, "c"))
	store.gate <- putTime
	mustAck(t, "a", a)
	if uploads, lingering := inFlight(w); uploads != 0 || !lingering {
		t.Fatalf("after a's bulk: %d uploads in flight, lingering %v; want b and c held back", uploads, lingering)
	}
	return w, store, b, c
}

// An appender acknowledged by one bulk that comes straight back joins the
// next bulk instead of waiting for it to be stored first.
func TestLingerMergesTheAppendersJustAcknowledged(t *testing.T) {
	w, store, b, c := lingerStart(t, 500*time.Millisecond)
	a := submitAsync(t, w, frame(1, 1, "a2"))
	if uploads, _ := inFlight(w); uploads != 1 {
		t.Fatalf("with everyone back, %d uploads in flight, want the next bulk sealed at once", uploads)
	}
	store.gate <- 0
	for name, done := range map[string]chan error{"a2": a, "b": b, "c": c} {
		mustAck(t, name, done)
	}
	if st := w.Stats(); st.Puts != 2 || st.Submissions != 4 {
		t.Fatalf("%d frames in %d puts, want a alone, then a2, b and c together", st.Submissions, st.Puts)
	}
}

// When the acknowledged appenders do not come back, the wait ends after
// about a PUT's time, and the draft leaves.
func TestLingerEndsAfterAPutTime(t *testing.T) {
	w, store, b, c := lingerStart(t, 20*time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if uploads, _ := inFlight(w); uploads == 1 {
			break // the wait timed out and sealed b and c
		}
		if time.Now().After(deadline) {
			t.Fatal("b and c still held back 10 s after a's bulk")
		}
	}
	store.gate <- 0
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
	w := OpenWAL(WALConfig{Store: store, Node: 1, Epoch: 1, MaxLinger: time.Hour})
	defer func() {
		close(store.gate)
		w.Close()
	}()
	for i := range 3 {
		done := submitAsync(t, w, frame(1, uint64(i), "x"))
		if uploads, _ := inFlight(w); uploads != 1 {
			t.Fatalf("lone append %d: %d uploads in flight, want its bulk sealed at once", i, uploads)
		}
		store.gate <- 50 * time.Millisecond
		mustAck(t, "lone append", done)
	}
}
