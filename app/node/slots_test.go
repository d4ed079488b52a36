package node

import (
	"context"
	"errors"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
)

func TestSetSlots(t *testing.T) {
	log := memlog.New()
	ctx := context.Background()
	n, err := Start(ctx, Config{ID: 1, Address: "x", Slots: 1, Log: log, Lease: log.Lease(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.SetSlots(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if v := n.View(); func() uint32 { reg, _ := v.Node(1); return reg.Slots }() != 0 {
		t.Fatal("the view does not hold the new slots when SetSlots returns")
	}
	if err := n.SetSlots(ctx, 1, 0); err != nil {
		t.Fatalf("setting the same slots again: %v", err)
	}
	if err := n.SetSlots(ctx, 2, 3); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("slots of an unregistered node: %v, want ErrUnknownNode", err)
	}
}
