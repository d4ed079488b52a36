package engine

import (
	"context"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// A sealing append's records are durable before its seal is recorded;
// readers see them only with the closure, once the seal is recorded, and
// Read and End say the same of the stream. A seal whose record fails
// shows them without it.
func TestASealingAppendsRecordsShowWithTheClosure(t *testing.T) {
	ctx := context.Background()
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	h := p.engine.byID(id)
	if _, err := h.Append(ctx, ports.AppendRequest{Records: records("a")}); err != nil {
		t.Fatal(err)
	}
	s, _ := p.engine.local(id)
	submitDurable(t, p, s, true) // "a" again, sealing; the seal is not recorded
	wantPage(t, h, 1, []string{"a"}, false)
	if err := p.engine.recordSeal(ctx, s); err != nil {
		t.Fatal(err)
	}
	wantPage(t, h, 2, []string{"a", "a"}, true)

	// The seal's record refused: the records show, the closure does not.
	inner := memlog.New()
	log := &refusesLog{MetaLog: inner, refuse: func(c domain.Command) bool {
		_, ok := c.(*domain.SealStreamBy)
		return ok
	}}
	p = startProcess(t, log, memstore.New(), 1, 1)
	id = p.create(t, "/s")
	h = p.engine.byID(id)
	if _, err := h.Append(ctx, ports.AppendRequest{Records: records("a"), Close: true}); err == nil {
		t.Fatal("append and close succeeded with its seal refused")
	}
	wantPage(t, h, 1, []string{"a"}, false)
}

// wantPage checks a read of the whole stream and End against each other.
func wantPage(t *testing.T, h Handle, tail uint64, want []string, closed bool) {
	t.Helper()
	page, err := h.Read(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := bodies(page.Records); page.Confirmed != tail || page.Closed != closed || len(got) != len(want) {
		t.Fatalf("read %q, tail %d, closed %v; want %q, tail %d, closed %v", got, page.Confirmed, page.Closed, want, tail, closed)
	}
	if end, isClosed, err := h.End(); err != nil || end != tail || isClosed != closed {
		t.Fatalf("End = %d, %v, %v; want %d, %v", end, isClosed, err, tail, closed)
	}
}
