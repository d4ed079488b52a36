package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
)

// TestDeleteFreesNameAndMarksData: after delete the name is reusable, the
// stream's objects are garbage, its WAL bulks retire, and its uncommitted
// bytes are returned to the budget.
func TestDeleteFreesNameAndMarksData(t *testing.T) {
	store := memstore.New()
	p := startProcess(t, memlog.New(), store, 1, 1)
	id := p.create(t, "/gone")
	ctx := context.Background()
	for i := range 5 {
		p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), nil)
	}
	if _, err := p.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	p.engine.byID(id).appendRecords(ctx, records("uncommitted"), nil)
	if err := p.engine.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := p.engine.byID(id).Read(ctx, 0, 1); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("read after delete: %v", err)
	}
	v := p.plane.View()
	if _, ok := v.StreamByName("/gone"); ok || v.GarbageCount() != 1 {
		t.Fatalf("after delete: name kept %v, %d garbage", ok, v.GarbageCount())
	}
	p.engine.roomMu.Lock()
	left := p.engine.uncommitted
	p.engine.roomMu.Unlock()
	if left != 0 {
		t.Fatalf("%d uncommitted bytes still counted", left)
	}
	again := p.create(t, "/gone")
	if again == id {
		t.Fatal("a new stream reused the deleted id")
	}
	if err := p.engine.Delete(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := p.engine.byID(again).appendRecords(ctx, []domain.Record{{Body: []byte("new")}}, nil); err != nil {
		t.Fatal(err)
	}
}
