package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// A sealing append's records are durable before its seal is recorded;
// readers see them only with the closure, once the seal is recorded, and
// Read and End say the same of the stream. A seal whose record fails
// keeps them hidden until the upload that commits them records it.
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

	// The seal's record refused: neither the records nor the closure show,
	// until the upload commits the records with the seal.
	inner := memlog.New()
	var refusing atomic.Bool
	refusing.Store(true)
	log := &refusesLog{MetaLog: inner, refuse: func(c domain.Command) bool {
		_, ok := c.(*domain.SealStreamBy)
		return ok && refusing.Load()
	}}
	p = startProcess(t, log, memstore.New(), 1, 1)
	id = p.create(t, "/s")
	h = p.engine.byID(id)
	if _, err := h.Append(ctx, ports.AppendRequest{Records: records("a"), Close: true}); err == nil {
		t.Fatal("append and close succeeded with its seal refused")
	}
	wantPage(t, h, 0, nil, false)
	if _, err := p.engine.Upload(ctx); err == nil {
		t.Fatal("upload committed the sealing records without their seal")
	}
	wantPage(t, h, 0, nil, false)
	refusing.Store(false)
	if _, err := p.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	wantPage(t, h, 1, []string{"a"}, true)
	if st := p.stream(t, id); !st.Sealed || st.End != 1 {
		t.Fatalf("stream after the upload: sealed %v, end %d; want sealed at 1", st.Sealed, st.End)
	}
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

// A producer's retry of a close whose seal's record failed is a duplicate,
// judged on the seal: it records the seal itself, and its answer is the
// close's.
func TestARetriedCloseRecordsTheSeal(t *testing.T) {
	ctx := context.Background()
	var refusing atomic.Bool
	refusing.Store(true)
	log := &refusesLog{MetaLog: memlog.New(), refuse: func(c domain.Command) bool {
		_, ok := c.(*domain.SealStreamBy)
		return ok && refusing.Load()
	}}
	p := startProcess(t, log, memstore.New(), 1, 1)
	id := p.create(t, "/s")
	h := p.engine.byID(id)
	req := ports.AppendRequest{Records: records("a"), Close: true, Producer: firstStamp()}
	if _, err := h.Append(ctx, req); err == nil {
		t.Fatal("append and close succeeded with its seal refused")
	}
	refusing.Store(false)
	res, err := h.Append(ctx, req)
	if err != nil || !res.Duplicate {
		t.Fatalf("the retry: %+v, %v; want a duplicate", res, err)
	}
	wantPage(t, h, 1, []string{"a"}, true)
}
