package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// TestSoftDeletedStreamDoesNotPinTheWAL: a stream soft-deleted (kept for
// its forks) with records still only in the WAL can never be reopened, so
// its frames must not keep the WAL's bulks from retiring.
func TestSoftDeletedStreamDoesNotPinTheWAL(t *testing.T) {
	store := memstore.New()
	p := startProcess(t, memlog.New(), store, 1, 1)
	ctx := context.Background()
	src := p.create(t, "/src")
	if _, err := p.engine.byID(src).appendRecords(ctx, records("a"), nil); err != nil {
		t.Fatal(err)
	}
	if err := p.engine.byID(src).CommitThrough(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r, err := p.plane.ProposeOne(ctx, &domain.CreateFork{By: p.by, Name: "/fork", Source: src, At: 1})
	if err != nil || !r.OK() {
		t.Fatalf("fork: %v %v", r, err)
	}
	if _, err := p.engine.byID(src).appendRecords(ctx, records("uncommitted"), nil); err != nil {
		t.Fatal(err)
	}
	if err := p.engine.Delete(ctx, src); err != nil {
		t.Fatal(err)
	}
	v := p.plane.View()
	if st, ok := v.Stream(src); !ok || !st.SoftDeleted {
		t.Fatal("the source is not soft-deleted")
	}
	other := p.create(t, "/other")
	for i := range 5 {
		if _, err := p.engine.byID(other).appendRecords(ctx, records(fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Every bulk is acknowledged by now: those stored are those retained.
	if n := walKeys(t, store, p); n > 1 {
		t.Fatalf("%d WAL bulks retained; a soft-deleted stream pins them", n)
	}
}

// TestAppendRacingCloseIsNotAcknowledged: an append that looked the stream
// up before Close (or CloseAll) and reaches the gate after it must not be
// acknowledged: the next owner opens the cleanly closed stream without
// reading this process's WAL, so the record would be lost.
func TestAppendRacingCloseIsNotAcknowledged(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprint("all=", all), func(t *testing.T) {
			log, store := memlog.New(), memstore.New()
			old := startProcess(t, log, store, 1, 1)
			ctx := context.Background()
			id := old.create(t, "/s")
			if _, err := old.engine.byID(id).appendRecords(ctx, records("a"), nil); err != nil {
				t.Fatal(err)
			}
			s, _ := old.engine.local(id) // an append in flight holds this
			var err error
			if all {
				err = old.engine.CloseAll(ctx)
			} else {
				err = old.engine.Close(ctx, id)
			}
			if err != nil {
				t.Fatal(err)
			}
			res, done, err := old.engine.submit(s, ports.AppendRequest{Records: records("late")}, time.Time{})
			if err == nil {
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("no outcome")
				}
			}
			if err == nil {
				next := startProcess(t, log, store, 2, 1)
				next.plane.WaitFor(ctx, old.plane.Applied())
				if _, err := next.engine.Open(ctx, id); err != nil {
					t.Fatal(err)
				}
				r, _ := next.engine.byID(id).Read(ctx, 0, 10)
				t.Fatalf("append after close acknowledged at %d; the next owner reads %v", res.First, bodies(r.Records))
			}
		})
	}
}

// TestReadRacingTrimKeepsOffsets: a trim that lands while a read is under
// way must not make the read return later records under the offset it was
// asked for.
func TestReadRacingTrimKeepsOffsets(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	p := startProcess(t, log, store, 1, 1)
	p.engine = New(Config{Plane: p.plane, By: p.by, Store: store, WAL: p.wal, TailRecords: 1})
	ctx := context.Background()
	id := p.create(t, "/s")
	for i := range 4 {
		if _, err := p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.engine.Upload(ctx); err != nil { // one object per record
			t.Fatal(err)
		}
	}
	s, _ := p.engine.local(id)
	s.mu.Lock() // the read below looks at the view, then waits here
	got := make(chan ReadResult, 1)
	go func() {
		r, err := p.engine.byID(id).Read(ctx, 0, 1)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	time.Sleep(20 * time.Millisecond)
	r, err := p.plane.ProposeOne(ctx, &domain.TrimStream{By: p.by, Stream: id, Epoch: s.epoch, Start: 2})
	if err != nil || !r.OK() {
		s.mu.Unlock()
		t.Fatalf("trim: %v %v", r, err)
	}
	s.mu.Unlock()
	res := <-got
	if len(res.Records) == 1 && string(res.Records[0].Body) != fmt.Sprint(res.From) {
		t.Fatalf("read labels record %q as offset %d", res.Records[0].Body, res.From)
	}
}
