package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// LeaseOpener returns a fresh lease, free and never acquired, and registers
// any cleanup with t.Cleanup.
type LeaseOpener func(t *testing.T) ports.Lease

// Lease runs the lease suite. Times are passed explicitly, so expiry is
// tested without sleeping.
func Lease(t *testing.T, open LeaseOpener) {
	t.Run("AcquireHoldsOthersOff", func(t *testing.T) { testAcquire(t, open) })
	t.Run("ReacquireBumpsEpoch", func(t *testing.T) { testReacquire(t, open) })
	t.Run("RenewExtends", func(t *testing.T) { testRenew(t, open) })
	t.Run("ExpiryHandsOver", func(t *testing.T) { testExpiry(t, open) })
	t.Run("ReleaseFreesAtOnce", func(t *testing.T) { testRelease(t, open) })
	t.Run("RacingAcquiresOneWinner", func(t *testing.T) { testAcquireRace(t, open) })
	t.Run("SuccessorTakesOverAtOnce", func(t *testing.T) { testSuccessor(t, open) })
}

const ttl = 10 * time.Second

// start is an arbitrary fixed time; the lease only compares the times it is given.
var start = time.Unix(1_700_000_000, 0)

func at(d time.Duration) time.Time { return start.Add(d) }

func mustAcquire(ctx context.Context, t *testing.T, l ports.Lease, holder string, now time.Time) uint64 {
	t.Helper()
	epoch, err := l.Acquire(ctx, holder, "", ttl, now)
	if err != nil {
		t.Fatalf("Acquire(%s, %v): %v", holder, now.Sub(start), err)
	}
	return epoch
}

func expectHeld(ctx context.Context, t *testing.T, l ports.Lease, holder string, now time.Time) {
	t.Helper()
	if _, err := l.Acquire(ctx, holder, "", ttl, now); !errors.Is(err, ports.ErrLeaseHeld) {
		t.Fatalf("Acquire(%s, %v) = %v, want ErrLeaseHeld", holder, now.Sub(start), err)
	}
}

func expectRenew(ctx context.Context, t *testing.T, l ports.Lease, holder string, epoch uint64, now time.Time, want error) {
	t.Helper()
	err := l.Renew(ctx, holder, epoch, ttl, now)
	if (want == nil && err != nil) || !errors.Is(err, want) {
		t.Fatalf("Renew(%s, epoch %d, %v) = %v, want %v", holder, epoch, now.Sub(start), err, want)
	}
}

func mustRelease(ctx context.Context, t *testing.T, l ports.Lease, holder string, epoch uint64) {
	t.Helper()
	if err := l.Release(ctx, holder, epoch); err != nil {
		t.Fatalf("Release(%s, %d): %v", holder, epoch, err)
	}
}

func testAcquire(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	mustAcquire(ctx, t, l, "a", at(0))
	expectHeld(ctx, t, l, "b", at(0))
	expectHeld(ctx, t, l, "b", at(ttl/2))
}

func testReacquire(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	e1 := mustAcquire(ctx, t, l, "a", at(0))
	e2 := mustAcquire(ctx, t, l, "a", at(time.Second))
	if e2 <= e1 {
		t.Fatalf("re-acquire gave epoch %d after %d, want larger", e2, e1)
	}
	expectRenew(ctx, t, l, "a", e1, at(2*time.Second), ports.ErrLeaseLost)
	expectRenew(ctx, t, l, "a", e2, at(2*time.Second), nil)
}

func testRenew(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	e := mustAcquire(ctx, t, l, "a", at(0))
	expectRenew(ctx, t, l, "a", e, at(8*time.Second), nil)
	// Free by now without the renewal (expiry at 10s), held with it (18s).
	expectHeld(ctx, t, l, "b", at(15*time.Second))
	expectRenew(ctx, t, l, "a", e+1, at(9*time.Second), ports.ErrLeaseLost)
	expectRenew(ctx, t, l, "b", e, at(9*time.Second), ports.ErrLeaseLost)
	expectRenew(ctx, t, l, "a", e, at(16*time.Second), nil)
}

func testExpiry(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	e1 := mustAcquire(ctx, t, l, "a", at(0))
	expectRenew(ctx, t, l, "a", e1, at(11*time.Second), ports.ErrLeaseLost)
	e2 := mustAcquire(ctx, t, l, "b", at(12*time.Second))
	if e2 <= e1 {
		t.Fatalf("takeover gave epoch %d after %d, want larger", e2, e1)
	}
	// The old holder has lost it even at a time its own lease was valid.
	expectRenew(ctx, t, l, "a", e1, at(time.Second), ports.ErrLeaseLost)
	expectRenew(ctx, t, l, "a", e1, at(13*time.Second), ports.ErrLeaseLost)
	expectRenew(ctx, t, l, "b", e2, at(13*time.Second), nil)
	expectHeld(ctx, t, l, "a", at(14*time.Second))
}

func testRelease(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	e1 := mustAcquire(ctx, t, l, "a", at(0))
	mustRelease(ctx, t, l, "a", e1)
	e2 := mustAcquire(ctx, t, l, "b", at(0))
	if e2 <= e1 {
		t.Fatalf("acquire after release gave epoch %d after %d, want larger", e2, e1)
	}
	// Releases by a former holder or with a stale epoch change nothing.
	mustRelease(ctx, t, l, "a", e1)
	mustRelease(ctx, t, l, "b", e1)
	expectHeld(ctx, t, l, "c", at(time.Second))
	expectRenew(ctx, t, l, "a", e1, at(time.Second), ports.ErrLeaseLost)
	mustRelease(ctx, t, l, "b", e2)
	mustRelease(ctx, t, l, "b", e2)
	expectRenew(ctx, t, l, "b", e2, at(time.Second), ports.ErrLeaseLost)
	if e3 := mustAcquire(ctx, t, l, "c", at(time.Second)); e3 <= e2 {
		t.Fatalf("acquire after release gave epoch %d after %d, want larger", e3, e2)
	}
}

func testAcquireRace(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	const holders = 16
	errs := make([]error, holders)
	var wg sync.WaitGroup
	for h := range holders {
		wg.Go(func() {
			_, errs[h] = l.Acquire(ctx, fmt.Sprintf("node-%d", h), "", ttl, at(0))
		})
	}
	wg.Wait()
	winners := 0
	for h, err := range errs {
		switch {
		case err == nil:
			winners++
		case !errors.Is(err, ports.ErrLeaseHeld):
			t.Fatalf("holder %d: %v, want nil or ErrLeaseHeld", h, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d holders acquired the lease, want exactly 1", winners)
	}
}

func testSuccessor(t *testing.T, open LeaseOpener) {
	ctx := testContext(t)
	l := open(t)
	e1 := mustAcquire(ctx, t, l, "a", at(0))
	// An unrelated predecessor does not help.
	if _, err := l.Acquire(ctx, "b", "z", ttl, at(time.Second)); !errors.Is(err, ports.ErrLeaseHeld) {
		t.Fatalf("Acquire(b after z) while a holds: %v, want ErrLeaseHeld", err)
	}
	e2, err := l.Acquire(ctx, "b", "a", ttl, at(time.Second))
	if err != nil || e2 <= e1 {
		t.Fatalf("Acquire(b after a) while a holds = %d, %v; want an epoch above %d", e2, err, e1)
	}
	expectRenew(ctx, t, l, "a", e1, at(2*time.Second), ports.ErrLeaseLost)
	expectRenew(ctx, t, l, "b", e2, at(2*time.Second), nil)
	// The superseded holder cannot take it back, and naming it no longer
	// takes the lease from b.
	expectHeld(ctx, t, l, "a", at(3*time.Second))
	if _, err := l.Acquire(ctx, "c", "a", ttl, at(3*time.Second)); !errors.Is(err, ports.ErrLeaseHeld) {
		t.Fatalf("Acquire(c after a) while b holds: %v, want ErrLeaseHeld", err)
	}
	if e3, err := l.Acquire(ctx, "c", "b", ttl, at(3*time.Second)); err != nil || e3 <= e2 {
		t.Fatalf("Acquire(c after b) while b holds = %d, %v; want an epoch above %d", e3, err, e2)
	}
}
