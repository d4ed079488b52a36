package engine

import (
	"context"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
)

// An open that read its view while the stream was open on a live writer,
// and whose OpenStream applies just after that writer closed it, takes the
// recovery from the metadata the open applied to: it does not fence the
// live writer's WAL (which would fail all of that writer's appends).
func TestAnOpenRacingACloseLeavesTheLiveWriterAlone(t *testing.T) {
	mem, store := memlog.New(), memstore.New()
	ctx := context.Background()
	holder := startProcess(t, mem, store, 2, 1)
	other := holder.create(t, "/other")
	s := holder.create(t, "/s") // as a takeover's Open leaves it
	holder.appendTo(t, s, "a")
	slow := &slowLog{MetaLog: mem, only: func(c domain.Command) bool { _, ok := c.(*domain.OpenStream); return ok }}
	x := takeOver(t, slow, store, 3, 1, holder) // sees s open on the live holder
	slow.delay.Store(int64(200 * time.Millisecond))
	done := make(chan error, 1)
	go func() { done <- x.engine.Open(ctx, s) }()
	time.Sleep(50 * time.Millisecond)                   // x has read its view and is proposing
	if err := holder.engine.Close(ctx, s); err != nil { // the takeover lets s go
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Logf("x's open: %v", err)
	}
	if _, err := holder.engine.AppendWith(ctx, other, records("b"), AppendOptions{}); err != nil {
		t.Fatalf("the live lease holder cannot append any more: %v", err)
	}
}

// As above, and the writer retired the stream's WAL bulk once committed:
// the open starts the stream from the committed end, not from the end in
// the view it read before.
func TestAnOpenRacingACloseStartsFromTheCommittedEnd(t *testing.T) {
	mem, store := memlog.New(), memstore.New()
	ctx := context.Background()
	holder := startProcess(t, mem, store, 2, 1)
	other := holder.create(t, "/other")
	s := holder.create(t, "/s")
	holder.appendTo(t, s, "a")
	slow := &slowLog{MetaLog: mem, only: func(c domain.Command) bool { _, ok := c.(*domain.OpenStream); return ok }}
	x := takeOver(t, slow, store, 3, 1, holder)
	slow.delay.Store(int64(300 * time.Millisecond))
	done := make(chan error, 1)
	go func() { done <- x.engine.Open(ctx, s) }()
	time.Sleep(50 * time.Millisecond)
	if err := holder.engine.Close(ctx, s); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"o1", "o2"} { // s's bulk retires
		holder.appendTo(t, other, b)
		if _, err := holder.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("x's open: %v", err)
	}
	slow.delay.Store(0)
	r, err := x.engine.AppendWith(ctx, s, records("b"), AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := x.plane.View(); r.First != 1 {
		st, _ := v.Stream(s)
		t.Fatalf("x acknowledged b at offset %d; the committed end is %d (a is at 0)", r.First, st.End)
	}
}
