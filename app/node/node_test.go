package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func TestReadyFollowsRegistrationWALAndDrain(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	n, err := Start(ctx, Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Ready(); err != nil {
		t.Fatalf("fresh node not ready: %v", err)
	}
	r, err := n.Plane().ProposeOne(ctx, &domain.CreateStream{By: n.Proposer(), Name: "/s", Open: true})
	if err != nil || r.Code != domain.ResultOK {
		t.Fatalf("create: %v %v", r, err)
	}
	eng := n.Engine()
	h, err := eng.Open(ctx, r.Value)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Append(ctx, ports.AppendRequest{Records: []domain.Record{{Body: []byte("a")}}}); err != nil {
		t.Fatal(err)
	}
	// Another process fences this node's WAL: the next append fails and the
	// node must stop taking traffic.
	if _, err := wal.Fence(ctx, store, 1, n.Epoch(), domain.Proposer{Node: 2, Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Append(ctx, ports.AppendRequest{Records: []domain.Record{{Body: []byte("b")}}}); !errors.Is(err, engine.ErrFenced) {
		t.Fatalf("append after fence: %v", err)
	}
	if err := n.Ready(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("ready with a fenced WAL: %v", err)
	}
}

func TestDrainAndRestartFence(t *testing.T) {
	log := memlog.New()
	ctx := context.Background()
	first, err := Start(ctx, Config{ID: 1, Address: "x", Slots: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	first.Drain()
	if err := first.Ready(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("draining node ready: %v", err)
	}
	second, err := Start(ctx, Config{ID: 1, Address: "x", Slots: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if second.Epoch() <= first.Epoch() {
		t.Fatalf("restart epoch %d not above %d", second.Epoch(), first.Epoch())
	}
	first.Plane().WaitFor(ctx, second.Plane().Applied())
	if err := first.Ready(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("fenced predecessor still ready: %v", err)
	}
	first.Close()
}

// crashedLease is a lease whose holder dies without releasing it: the
// lease stays held until its TTL runs out.
type crashedLease struct{ ports.Lease }

func (crashedLease) Release(context.Context, string, uint64) error { return nil }

// A process restarted after a crash takes its predecessor's maintenance
// lease at once: it need not wait out the dead process's TTL (10 s) before
// its chores (dead-WAL takeovers, deliveries, GC) run.
func TestRestartedProcessTakesItsPredecessorsLease(t *testing.T) {
	log, lease := memlog.New(), memlog.NewLease()
	ctx := context.Background()
	first, err := Start(ctx, Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: crashedLease{lease}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first process's lease", func() bool { _, held := first.LeaseHolder(); return held })
	// A crash: no hand-off, no leave, and the lease stays held.
	first.stop()
	first.wg.Wait()
	defer first.plane.Close()
	other, err := Start(ctx, Config{ID: 2, Address: "y", Slots: 1, Log: log, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	second, err := Start(ctx, Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if !heldWithin(second, 3*time.Second) {
		t.Fatal("the restarted process waited for its predecessor's lease to expire")
	}
	if _, held := other.LeaseHolder(); held {
		t.Fatal("another node holds the lease beside the restarted process")
	}
}

// Two processes cannot run at one explicit epoch: the second registration
// is the first one again, so it is refused rather than sharing the first's
// WAL key space and lease name.
func TestStartRefusesAnEpochInUse(t *testing.T) {
	log := memlog.New()
	ctx := context.Background()
	first, err := Start(ctx, Config{ID: 1, Epoch: 7, Address: "x", Slots: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if second, err := Start(ctx, Config{ID: 1, Epoch: 7, Address: "x", Slots: 1, Log: log}); err == nil {
		second.Close()
		t.Fatal("a second process started at the epoch the first runs at")
	}
	if err := first.Ready(); err != nil {
		t.Fatalf("the first process was disturbed: %v", err)
	}
}
