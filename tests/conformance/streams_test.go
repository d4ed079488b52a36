package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/streams"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/conformance"
)

// serviceFeatures: the real service does everything the suite checks.
var serviceFeatures = conformance.StreamsFeatures{Forks: true, Clock: true}

// TestStreams runs the suite against the real service on in-memory
// adapters. The fake (adapters/internal/server/streamsfake) runs it in its own
// package, which Go's internal rule keeps out of reach here.
func TestStreams(t *testing.T) {
	conformance.Streams(t, openService, serviceFeatures)
}

// openService starts one node process: metadata plane, WAL, engine and
// stream service, on a memory log and store, reading a settable clock.
func openService(t *testing.T) (ports.Streams, *conformance.Clock) {
	t.Helper()
	ctx := context.Background()
	clock := conformance.NewClock(time.UnixMilli(1_700_000_000_000))
	log, store := memlog.New(), memstore.New()
	plane, err := meta.Open(ctx, meta.Config{Log: log, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("open the plane: %v", err)
	}
	t.Cleanup(func() { plane.Close() })
	const node, addr = domain.NodeID(1), "http://node1"
	if r, err := plane.ProposeOne(ctx, &domain.RegisterNode{Node: node, Epoch: 1, Address: addr, Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register the node: %v %v", r, err)
	}
	by := domain.Proposer{Node: node, Epoch: 1}
	w := wal.Open(wal.Config{Store: store, Node: node, Epoch: 1, RetryFor: time.Second})
	t.Cleanup(func() { w.Close() })
	eng := engine.New(engine.Config{Plane: plane, By: by, Store: store, WAL: w, Now: clock.Now})
	return streams.New(streams.Config{Plane: plane, Engine: eng, By: by, Address: addr, Now: clock.Now}), clock
}
