package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// TestTrimThenCollectGarbageDeletesBytes: trimming past a data object marks
// it; collection deletes its bytes, then the catalog forgets it.
func TestTrimThenCollectGarbageDeletesBytes(t *testing.T) {
	store := memstore.New()
	p := startProcess(t, memlog.New(), store, 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	var objects []uint64
	for round := range 3 {
		for i := range 4 {
			p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(round*4+i)), nil)
		}
		if _, err := p.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
		v := p.plane.View()
		st, _ := v.Stream(id)
		obj, _ := v.ObjectAt(st, st.End-1)
		objects = append(objects, obj.ID)
	}
	s, _ := p.engine.local(id)
	if r, err := p.plane.ProposeOne(ctx, &domain.TrimStream{By: p.by, Stream: id, Epoch: s.epoch, Start: 8}); err != nil || r.Code != domain.ResultOK {
		t.Fatalf("trim: %v %v", r, err)
	}
	if r, _ := p.engine.byID(id).Read(ctx, 0, 1); len(r.Records) != 1 || string(r.Records[0].Body) != "8" {
		t.Fatalf("read from 0 after trimming to 8: %v", bodies(r.Records))
	}
	n, err := p.engine.CollectGarbage(ctx)
	if err != nil || n != 2 {
		t.Fatalf("collected %d, %v; want the 2 objects below offset 8", n, err)
	}
	for i, obj := range objects {
		_, err := store.Get(ctx, domain.DataKey(obj), 0, 1)
		if gone := errors.Is(err, ports.ErrNotFound); gone != (i < 2) {
			t.Fatalf("object %d (#%d) gone=%v", obj, i, gone)
		}
	}
	if v := p.plane.View(); v.GarbageCount() != 0 {
		t.Fatalf("%d garbage marks left", v.GarbageCount())
	}
	if n, err := p.engine.CollectGarbage(ctx); err != nil || n != 0 {
		t.Fatalf("second pass: %d %v", n, err)
	}
}

// TestExpiredReservationBecomesGarbage: an id reserved by an upload that
// never committed is marked once its TTL passes, and collected.
func TestExpiredReservationBecomesGarbage(t *testing.T) {
	store := memstore.New()
	p := startProcess(t, memlog.New(), store, 1, 1)
	ctx := context.Background()
	r, _ := p.plane.ProposeOne(ctx, &domain.ReserveObjects{By: p.by, Count: 1, TTLMs: 0, NowMs: 1})
	store.PutIfAbsent(ctx, domain.DataKey(r.Value), []byte("orphan"))
	if err := p.engine.ExpireReservations(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := p.engine.CollectGarbage(ctx); err != nil || n != 1 {
		t.Fatalf("collected %d, %v", n, err)
	}
	if _, err := store.Get(ctx, domain.DataKey(r.Value), 0, -1); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("orphan bytes still there: %v", err)
	}
}

// An idle engine's chores write nothing to the log: expiring reservations
// when none has expired, or collecting garbage when there is none, is no
// row (an idle node would otherwise append one every tick, forever).
func TestIdleChoresProposeNothing(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	ctx := context.Background()
	before := p.plane.View().Applied
	for range 3 {
		if err := p.engine.ExpireReservations(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := p.engine.CollectGarbage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if after := p.plane.View().Applied; after != before {
		t.Fatalf("idle chores applied %d commands", after-before)
	}
}
