package httpguard

import (
	"context"
	"errors"
	"testing"
	"time"
)

// tryTurn takes a turn unless it waits longer than within.
func tryTurn(c *CatchUp, within time.Duration) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return c.Turn(ctx, 1)
}

// TestCatchUpYieldsToAppends: with appends running a two-CPU node at half
// its CPUs serves one catch-up page at a time, a waiter gets the turn its
// holder releases, and once appends have stopped for a while pages take
// both CPUs.
func TestCatchUpYieldsToAppends(t *testing.T) {
	c := NewCatchUp(CatchUpLimits{Share: 0.5, CPUs: 2})
	done := c.Foreground()
	first, err := tryTurn(c, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryTurn(c, 5*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second turn while an append runs: %v, want to wait", err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := tryTurn(c, time.Second)
		if err == nil {
			release()
		}
		got <- err
	}()
	time.Sleep(2 * time.Millisecond)
	first()
	first() // a second release changes nothing
	if err := <-got; err != nil {
		t.Fatalf("the waiter after a release: %v", err)
	}
	done()
	time.Sleep(foregroundLinger + 10*time.Millisecond)
	a, errA := tryTurn(c, time.Second)
	b, errB := tryTurn(c, 5*time.Millisecond)
	if errA != nil || errB != nil {
		t.Fatalf("two turns with no append running: %v, %v", errA, errB)
	}
	a()
	b()
	if s := c.Stats(); s.Turns != 0 || s.Served != 4 || s.Waited != 2 {
		t.Fatalf("stats %+v, want 0 held, 4 served, 2 waited", s)
	}
}

// TestCatchUpTurnEndsByItself: a turn held past maxTurn (a client that
// stopped reading) lets the next page go.
func TestCatchUpTurnEndsByItself(t *testing.T) {
	c := NewCatchUp(CatchUpLimits{Share: 0.5, CPUs: 2})
	defer c.Foreground()()
	if _, err := tryTurn(c, time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	release, err := tryTurn(c, time.Second)
	if err != nil {
		t.Fatalf("behind a stalled turn: %v", err)
	}
	release()
	if waited := time.Since(start); waited < maxTurn/2 {
		t.Fatalf("waited %v behind a held turn, want about %v", waited, maxTurn)
	}
}

// TestCatchUpDutyCycle: below one CPU's share a turn rests before it ends,
// so that one page at a time runs for that part of the time.
func TestCatchUpDutyCycle(t *testing.T) {
	c := NewCatchUp(CatchUpLimits{Share: 0.25, CPUs: 2}) // half of one CPU
	defer c.Foreground()()
	release, err := tryTurn(c, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Millisecond)
	start := time.Now()
	release()
	if rested := time.Since(start); rested < 3*time.Millisecond {
		t.Fatalf("a turn of 4 ms at a duty of 1/2 rested %v, want about 4 ms", rested)
	}
	if c.rest(time.Hour) != maxTurn {
		t.Fatalf("rest after a long turn: %v, want at most %v", c.rest(time.Hour), maxTurn)
	}
}

// TestCatchUpByteRate: the byte bound spaces pages out, appends or not.
func TestCatchUpByteRate(t *testing.T) {
	c := NewCatchUp(CatchUpLimits{CPUs: 2, BytesPerSecond: 1000})
	start := time.Now()
	for range 2 {
		release, err := c.Turn(context.Background(), catchUpBurst/2+100)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := c.Turn(ctx, 1000); err == nil {
		t.Fatalf("a page past the bucket went at once (after %v)", time.Since(start))
	}
}
