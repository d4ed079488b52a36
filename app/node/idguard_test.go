package node

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A second process given a node id that a live process holds fails to
// start, with a clear error, and leaves that one running: whether it runs
// elsewhere or at the same address (on another host behind one name).
func TestStartRefusesANodeIDInUse(t *testing.T) {
	for _, addr := range []string{"elsewhere", "x"} {
		c := newFailoverCluster(t)
		a := c.start(1, nil, c.log.Heartbeats())
		c.awaitRecords(1)
		_, err := Start(context.Background(), Config{ID: 1, Address: addr, Slots: 1, Log: c.log, Store: c.store,
			Heartbeats: c.log.Heartbeats(), FailoverAfter: testFailoverAfter, BeatEvery: 20 * time.Millisecond})
		if !errors.Is(err, ErrNodeIDInUse) {
			t.Fatalf("at %s: Start with a node id in use = %v, want ErrNodeIDInUse", addr, err)
		}
		if fencedWithin(a, 100*time.Millisecond) {
			t.Fatalf("at %s: the refused start fenced the live process", addr)
		}
		if got := registration(a, 1).Epoch; got != a.Epoch() {
			t.Fatalf("at %s: registered epoch %d, want the live process's %d", addr, got, a.Epoch())
		}
	}
}

// A process takes over a node id whose process went silent once it has
// watched the heartbeat for the failover window: the silent one may be
// paused or cut off and still answer from its own state until then. So
// does a restart at the same address.
func TestStartTakesOverASilentNodeID(t *testing.T) {
	for _, addr := range []string{"elsewhere", "x"} {
		c := newFailoverCluster(t)
		beats := newDroppingBeats(c.log.Heartbeats())
		a := c.start(1, nil, beats)
		c.awaitRecords(1)
		beats.fail(true)                  // a keeps running, but as if it had died
		time.Sleep(60 * time.Millisecond) // a beat already under way lands first
		began := time.Now()
		b := c.start(1, nil, c.log.Heartbeats(), func(cfg *Config) { cfg.Address = addr })
		if waited := time.Since(began); waited < testFailoverAfter {
			t.Fatalf("at %s: took over after %v, before watching the heartbeat for %v", addr, waited, testFailoverAfter)
		}
		if !fencedWithin(a, time.Second) {
			t.Fatalf("at %s: the silent process was not fenced by the takeover", addr)
		}
		if got := registration(b, 1).Epoch; got != b.Epoch() {
			t.Fatalf("at %s: registered epoch %d, want the new process's %d", addr, got, b.Epoch())
		}
	}
}

// With failover off, the same node coming back (same address) registers at
// once, and a node id whose process left cleanly is free at once, wherever
// the next one runs.
func TestStartDoesNotWaitForItsOwnNodeOrOneThatLeft(t *testing.T) {
	c := newFailoverCluster(t)
	// Beats of half a second: a start that watched would take two seconds.
	slow := func(cfg *Config) { cfg.BeatEvery, cfg.FailoverAfter = 500*time.Millisecond, 0 }
	a := c.start(1, nil, c.log.Heartbeats(), slow)
	c.awaitRecords(1)
	began := time.Now()
	b := c.start(1, nil, c.log.Heartbeats(), slow) // the same address
	if waited := time.Since(began); waited >= minSilentBeats*500*time.Millisecond {
		t.Fatalf("a restart at the same address waited %v", waited)
	}
	if !fencedWithin(a, time.Second) {
		t.Fatal("the restart did not fence its predecessor")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	c.start(1, nil, c.log.Heartbeats(), slow, func(cfg *Config) { cfg.Address = "elsewhere" })
	if waited := time.Since(began); waited >= minSilentBeats*500*time.Millisecond {
		t.Fatalf("a start after a clean stop waited %v", waited)
	}
}
