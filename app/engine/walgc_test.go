package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// walKeysAndFences lists the WAL keys under prefix, and how many of them are fences.
func walKeysAndFences(t *testing.T, store *memstore.Store, prefix string) (keys []string, fences int) {
	t.Helper()
	ctx := context.Background()
	infos, err := store.List(ctx, prefix, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range infos {
		body, err := store.Get(ctx, o.Key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if domain.IsFence(body) {
			fences++
		}
		keys = append(keys, o.Key)
	}
	return keys, fences
}

// A gone process's WAL bulks are deleted once every stream it wrote was
// taken over and recovered; its fences stay, and a process the view does
// not know as gone is left alone.
func TestDeadWALsAreCollectedOnceNoTakeoverNeedsThem(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	old := startProcess(t, log, store, 1, 1)
	s1, s2 := old.create(t, "/s1"), old.create(t, "/s2")
	for _, id := range []uint64{s1, s2} {
		if _, err := old.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("a")}); err != nil {
			t.Fatal(err)
		}
	}
	// A WAL key of a process newer than anything registered: not gone.
	future := domain.WALKey(3, 9, 1)
	if err := store.PutIfAbsent(ctx, future, []byte("not known yet")); err != nil {
		t.Fatal(err)
	}
	next := takeOver(t, log, store, 1, 2, old)
	if n := next.collectDeadWALs(t); n != 0 {
		t.Fatalf("deleted %d bulks while both streams are still open on the gone process", n)
	}
	next.mustOpen(t, s1)
	if n := next.collectDeadWALs(t); n != 0 {
		t.Fatalf("deleted %d bulks while /s2 is still open on the gone process", n)
	}
	next.mustOpen(t, s2)
	if n := next.collectDeadWALs(t); n == 0 {
		t.Fatal("deleted no bulks once both streams were recovered")
	}
	keys, fences := walKeysAndFences(t, store, domain.WALPrefix(1, 1))
	if len(keys) == 0 || fences != len(keys) {
		t.Fatalf("the gone process's WAL holds %v, %d of them fences: want only fences", keys, fences)
	}
	if _, err := store.Get(ctx, future, 0, -1); err != nil {
		t.Fatalf("the WAL of a process not known to be gone was touched: %v", err)
	}
	if n := next.collectDeadWALs(t); n != 0 {
		t.Fatalf("a second pass deleted %d more", n)
	}
	for _, id := range []uint64{s1, s2} {
		if got := readAll(t, next, id); len(got) != 1 || got[0] != "a" {
			t.Fatalf("stream %d reads %v after the collection, want [a]", id, got)
		}
	}
}

// Keys that stay (fences, live WALs) do not hide the dead bulks listed after
// them: each pass goes on where the last one stopped.
func TestDeadWALsAfterManyKeptKeysAreCollected(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	old := startProcess(t, log, store, 2, 1)
	s := old.create(t, "/s")
	old.appendTo(t, s, "a")
	next := takeOver(t, log, store, 2, 2, old)
	next.mustOpen(t, s)
	one := startProcess(t, log, store, 1, 1000)
	next.plane.WaitFor(ctx, one.plane.Applied())
	for i := range uint64(maxDeadWALKeys) { // fences of node 1's earlier processes sort first
		if err := store.PutIfAbsent(ctx, domain.WALKey(1, i+1, 1), domain.EncodeFence(next.by)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := next.engine.CollectDeadWALs(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if keys, fences := walKeysAndFences(t, store, domain.WALPrefix(2, 1)); fences != len(keys) {
		t.Fatalf("the gone process (2, 1) still holds %d bulks", len(keys)-fences)
	}
}

// Once a round over the WAL key space finds nothing of gone processes but
// fences, collection stops listing, so an idle node makes no requests; a
// node registering again starts the listings, and its gone process's bulk
// is collected.
func TestDeadWALListingsStopUntilANodeChanges(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	old.appendTo(t, id, "a")
	counted := &listCounter{ObjectStore: store}
	next := takeOver(t, log, counted, 1, 2, old)
	next.mustOpen(t, id)
	if n := next.collectDeadWALs(t); n == 0 {
		t.Fatal("deleted no bulks of the gone process once its stream was recovered")
	}
	next.collectDeadWALs(t) // a round that finds only the fence it knows
	lists := counted.lists.Load()
	for range 3 {
		if n := next.collectDeadWALs(t); n != 0 {
			t.Fatalf("deleted %d bulks with nothing left to collect", n)
		}
	}
	if got := counted.lists.Load(); got != lists {
		t.Fatalf("listed the WAL key space %d more times with nothing left to collect", got-lists)
	}
	// A process of node 3 the view does not know yet leaves a bulk; then
	// node 3 registers at a later epoch, which makes that process gone.
	bulk := domain.WALKey(3, 1, 1)
	if err := store.PutIfAbsent(ctx, bulk, []byte("bulk")); err != nil {
		t.Fatal(err)
	}
	if n := next.collectDeadWALs(t); n != 0 {
		t.Fatalf("deleted %d bulks before any node changed", n)
	}
	if r, err := next.plane.ProposeOne(ctx, &domain.RegisterNode{Node: 3, Epoch: 2, Address: "x", Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register: %v %v", r, err)
	}
	if n := next.collectDeadWALs(t); n != 1 {
		t.Fatalf("deleted %d bulks once node 3 registered again, want its gone process's 1", n)
	}
	if _, err := store.Get(ctx, bulk, 0, -1); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("the gone process's bulk is still there: %v", err)
	}
}

// collectDeadWALs runs one dead-WAL collection and returns the bulks it
// deleted.
func (p *process) collectDeadWALs(t *testing.T) int {
	t.Helper()
	n, err := p.engine.CollectDeadWALs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
