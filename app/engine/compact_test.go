package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
)

// TestCompactionMergesSmallObjects: ten small uploads of one stream become
// one object; reads, producer state and the garbage marks follow.
func TestCompactionMergesSmallObjects(t *testing.T) {
	store := memstore.New()
	p := startProcess(t, memlog.New(), store, 1, 1)
	p.engine.cfg.TailRecords = 1
	id := p.create(t, "/s")
	other := p.create(t, "/other")
	ctx := context.Background()
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprint(i))
		stamp := &domain.ProducerStamp{ID: "p", Epoch: 1, Seq: uint64(i)}
		if _, err := p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), stamp); err != nil {
			t.Fatal(err)
		}
		p.engine.byID(other).appendRecords(ctx, records("x"), nil) // shares each object
		if _, err := p.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n, err := p.engine.Compact(ctx, id)
	if err != nil || n != 10 {
		t.Fatalf("compacted %d objects, %v", n, err)
	}
	v := p.plane.View()
	st, _ := v.Stream(id)
	if st.Objects.Len() != 1 {
		t.Fatalf("stream indexes %d objects after compaction", st.Objects.Len())
	}
	if v.GarbageCount() != 0 {
		t.Fatalf("%d objects marked while /other still uses them", v.GarbageCount())
	}
	if got := readAll(t, p, id); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("reads %v after compaction", got)
	}
	if got := readAll(t, p, other); len(got) != 10 {
		t.Fatalf("/other reads %d records", len(got))
	}
	sec, err := p.engine.lastSection(ctx, st)
	if err != nil || len(sec.Producers) != 1 || sec.Producers[0].Seq != 9 {
		t.Fatalf("producer state after compaction: %+v %v", sec.Producers, err)
	}
	if n, _ := p.engine.Compact(ctx, id); n != 0 {
		t.Fatalf("compacted again: %d", n)
	}
}
