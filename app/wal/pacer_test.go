package wal

import (
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memstore"
)

// pacedWAL is a WAL on a gated store whose PUTs have taken putLatency of
// late, with a's frame in flight.
func pacedWAL(t *testing.T, cfg Config, putLatency time.Duration) (w *WAL, store *gatedStore, a chan error) {
	t.Helper()
	store = &gatedStore{ObjectStore: memstore.New(), gate: make(chan time.Duration, 16)}
	cfg.Store, cfg.Node, cfg.Epoch = store, 1, 1
	w = Open(cfg)
	t.Cleanup(func() {
		close(store.gate)
		closeWithin(t, w)
	})
	w.mu.Lock()
	w.pacer.latency, w.linger.putLatency = putLatency, putLatency
	w.mu.Unlock()
	return w, store, submitAsync(t, w, frame(1, 0, "a"))
}

// waitInFlight waits until n uploads are in flight and returns how long
// that took.
func waitInFlight(t *testing.T, w *WAL, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(10 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		if uploads, _ := inFlight(w); uploads == n {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d uploads in flight 10 s on, want %d", func() int { u, _ := inFlight(w); return u }(), n)
		}
	}
}

// On a slow store a draft does not wait for the upload in flight: it
// leaves once its first frame has waited a quarter of a PUT's time, and
// acknowledgements still follow bulk order.
func TestPacerOverlapsUploadsOnASlowStore(t *testing.T) {
	w, store, a := pacedWAL(t, Config{}, 200*time.Millisecond)
	waitInFlight(t, w, 1)
	start := time.Now()
	b := submitAsync(t, w, frame(2, 0, "b"))
	if uploads, _ := inFlight(w); uploads != 1 && time.Since(start) < 50*time.Millisecond {
		t.Fatalf("%d uploads in flight as b came, want b to wait its share of a PUT", uploads)
	}
	if took := waitInFlight(t, w, 2); took < 45*time.Millisecond || took > 5*time.Second {
		t.Fatalf("b left after %v, want a quarter of the 200 ms PUT latency", took)
	}
	release(t, store, 0) // one of the two PUTs: b's or a's
	release(t, store, 0)
	mustAck(t, "a", a)
	mustAck(t, "b", b)
	if st := w.Stats(); st.Puts != 2 {
		t.Fatalf("%d puts, want a's and b's", st.Puts)
	}
}

// The wait is never shorter than PipelineGap: on a store faster than that
// an upload completes first and nothing overlaps.
func TestPacerWaitsAtLeastTheGap(t *testing.T) {
	w, store, a := pacedWAL(t, Config{}, time.Millisecond)
	waitInFlight(t, w, 1)
	b := submitAsync(t, w, frame(2, 0, "b"))
	if took := waitInFlight(t, w, 2); took < 4*time.Millisecond {
		t.Fatalf("b left after %v while a was in flight, want at least the 5 ms gap", took)
	}
	release(t, store, 0)
	release(t, store, 0)
	mustAck(t, "a", a)
	mustAck(t, "b", b)
}

// Pipeline 1 turns the pacer off: the draft waits for the upload in flight.
func TestPipelineOneWaitsForTheUpload(t *testing.T) {
	w, store, a := pacedWAL(t, Config{Pipeline: 1}, 20*time.Millisecond)
	waitInFlight(t, w, 1)
	b := submitAsync(t, w, frame(2, 0, "b"))
	time.Sleep(100 * time.Millisecond)
	if uploads, _ := inFlight(w); uploads != 1 {
		t.Fatalf("%d uploads in flight with the pacer off, want b held for a", uploads)
	}
	release(t, store, 0)
	mustAck(t, "a", a)
	release(t, store, 0)
	mustAck(t, "b", b)
	if st := w.Stats(); st.Puts != 2 {
		t.Fatalf("%d puts, want 2", st.Puts)
	}
}

// On a slow store a linger lasts no longer than the pacer's wait: a
// quarter of a PUT, not two.
func TestPacerCapsTheLinger(t *testing.T) {
	for _, c := range []struct {
		pipeline int
		want     time.Duration
	}{{4, 50 * time.Millisecond}, {1, 400 * time.Millisecond}} {
		w := Open(Config{Store: memstore.New(), Node: 1, Epoch: 1, MaxLinger: time.Hour, Pipeline: c.pipeline})
		w.mu.Lock()
		w.pacer.latency, w.linger.putLatency = 200*time.Millisecond, 200*time.Millisecond
		before := time.Now()
		started := w.lingerLocked(1)
		wait := w.linger.until.Sub(before)
		w.linger.stop()
		w.mu.Unlock()
		closeWithin(t, w)
		if !started || wait > c.want+10*time.Millisecond || wait < c.want-10*time.Millisecond {
			t.Errorf("pipeline %d: linger started %v for %v, want %v", c.pipeline, started, wait, c.want)
		}
	}
}

// MaxPutRate bounds the PUTs a second however fast appends come: closed-loop
// appenders share the PUTs it allows.
func TestMaxPutRateBoundsPuts(t *testing.T) {
	w := Open(Config{Store: memstore.New(), Node: 1, Epoch: 1, MaxPutRate: 20})
	defer closeWithin(t, w)
	start := time.Now()
	var wg sync.WaitGroup
	for a := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if err := submitWait(t, w, frame(uint64(a), uint64(i), "x")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed, puts := time.Since(start), w.Stats().Puts
	if allowed := 1 + int64(elapsed.Seconds()*20); puts > allowed {
		t.Fatalf("%d PUTs in %v, want at most %d at 20 a second", puts, elapsed, allowed)
	}
}

// A frame that comes sooner than MaxPutRate allows after the last PUT waits
// for the next PUT it allows, and a lone one after a pause leaves at once.
func TestMaxPutRateDelaysTheNextPut(t *testing.T) {
	start := time.Now() // a is sealed after it
	w, store, a := pacedWAL(t, Config{MaxPutRate: 2}, 0)
	if uploads, _ := inFlight(w); uploads != 1 {
		t.Fatalf("%d uploads in flight after a lone frame, want it sent at once", uploads)
	}
	release(t, store, 0)
	mustAck(t, "a", a)
	b := submitAsync(t, w, frame(2, 0, "b"))
	waitInFlight(t, w, 1)
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Fatalf("b left %v after a, want the 500 ms that 2 PUTs a second allow", took)
	}
	release(t, store, 0)
	mustAck(t, "b", b)
}
