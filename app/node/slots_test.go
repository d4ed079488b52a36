package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
)

func slotsOf(n *Node, id domain.NodeID) uint32 {
	v := n.View()
	reg, _ := v.Node(id)
	return reg.Slots
}

// startBeating starts node 1 on a fresh log that records heartbeats.
func startBeating(t *testing.T) (*Node, *memlog.Log) {
	t.Helper()
	log := memlog.New()
	n, err := Start(context.Background(), Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(),
		Store: memstore.New(), Heartbeats: log.Heartbeats()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, log
}

func TestSetSlots(t *testing.T) {
	ctx := context.Background()
	n, _ := startBeating(t)
	if err := n.SetSlots(ctx, 1, 0); err != nil || slotsOf(n, 1) != 0 {
		t.Fatalf("set-slots 0 on itself: %v, slots %d", err, slotsOf(n, 1))
	}
	if err := n.SetSlots(ctx, 1, 0); err != nil {
		t.Fatalf("setting the same slots again: %v", err)
	}
	if err := n.SetSlots(ctx, 1, 2); err != nil || slotsOf(n, 1) != 2 {
		t.Fatalf("set-slots 2 on itself: %v, slots %d", err, slotsOf(n, 1))
	}
	if err := n.SetSlots(ctx, 2, 3); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("slots of an unregistered node: %v, want ErrUnknownNode", err)
	}
}

// Node 2's registration has no slots and no heartbeat, as a fence leaves
// it: giving it slots would get it fenced again, so it is refused until a
// process of that registration beats.
func TestSetSlotsRefusesARegistrationNoProcessRuns(t *testing.T) {
	ctx := context.Background()
	n, log := startBeating(t)
	if r, err := n.Plane().ProposeOne(ctx, &domain.RegisterNode{Node: 2, Epoch: 5, Address: "y", Slots: 0}); err != nil || !r.OK() {
		t.Fatalf("register node 2: %v %v", r, err)
	}
	if err := n.SetSlots(ctx, 2, 3); !errors.Is(err, ErrNoProcess) || slotsOf(n, 2) != 0 {
		t.Fatalf("slots for a registration no process runs: %v, slots %d; want ErrNoProcess and none", err, slotsOf(n, 2))
	}
	if err := log.Heartbeats().Beat(ctx, 2, 5, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := n.SetSlots(ctx, 2, 3); err != nil || slotsOf(n, 2) != 3 {
		t.Fatalf("slots for a registration that beats: %v, slots %d", err, slotsOf(n, 2))
	}
}
