package meta_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// TestHeldSnapshotsStartNone: once held, rows past the snapshot interval
// write no snapshot; the same rows on a plane not held write one.
func TestHeldSnapshotsStartNone(t *testing.T) {
	for _, held := range []bool{true, false} {
		log := memlog.New()
		p, err := meta.Open(context.Background(), meta.Config{Log: log, SnapshotEvery: 4, PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if held {
			p.HoldSnapshots()
		}
		for i := range 20 {
			r, err := p.ProposeOne(context.Background(), &domain.RegisterNode{Node: domain.NodeID(i + 1), Epoch: 1, Address: "x", Slots: 1})
			if err != nil || !r.OK() {
				t.Fatalf("register: %v %v", r, err)
			}
		}
		deadline := time.Now().Add(2 * time.Second)
		if held {
			time.Sleep(200 * time.Millisecond) // a snapshot, if one started, is written by now
		}
		_, err = log.Snapshot(context.Background())
		for !held && errors.Is(err, ports.ErrNoSnapshot) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			_, err = log.Snapshot(context.Background())
		}
		p.Close()
		if got := !errors.Is(err, ports.ErrNoSnapshot); got == held {
			t.Fatalf("held %v: a snapshot written: %v (%v)", held, got, err)
		}
	}
}
