package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
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
	go func() { _, err := x.engine.Open(ctx, s); done <- err }()
	time.Sleep(50 * time.Millisecond)                   // x has read its view and is proposing
	if err := holder.engine.Close(ctx, s); err != nil { // the takeover lets s go
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Logf("x's open: %v", err)
	}
	if _, err := holder.engine.byID(other).Append(ctx, ports.AppendRequest{Records: records("b")}); err != nil {
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
	go func() { _, err := x.engine.Open(ctx, s); done <- err }()
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
	r, err := x.engine.byID(s).Append(ctx, ports.AppendRequest{Records: records("b")})
	if err != nil {
		t.Fatal(err)
	}
	if v := x.plane.View(); r.First != 1 {
		st, _ := v.Stream(s)
		t.Fatalf("x acknowledged b at offset %d; the committed end is %d (a is at 0)", r.First, st.End)
	}
}

// lostOpenAck stores the first row holding an OpenStream after delay, then
// reports the append as failed and cannot read the row back right away: the
// proposer gets an error (outcome unknown) though its OpenStream applies.
type lostOpenAck struct {
	ports.MetaLog
	delay  time.Duration
	armed  atomic.Bool
	slept  atomic.Bool
	hidden atomic.Bool
}

func (l *lostOpenAck) Append(ctx context.Context, index uint64, payload []byte) error {
	cmds, _ := domain.DecodeRow(payload)
	for _, c := range cmds {
		if _, ok := c.(*domain.OpenStream); ok && l.armed.Load() {
			if l.slept.CompareAndSwap(false, true) {
				time.Sleep(l.delay)
			}
			if err := l.MetaLog.Append(ctx, index, payload); err != nil {
				return err // another row took index: the proposer moves on
			}
			l.armed.Store(false)
			l.hidden.Store(true)
			return errors.New("connection lost after the insert")
		}
	}
	return l.MetaLog.Append(ctx, index, payload)
}

func (l *lostOpenAck) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	if limit == 1 && l.hidden.CompareAndSwap(true, false) {
		return nil, errors.New("connection lost") // resolveAmbiguous cannot tell
	}
	return l.MetaLog.Read(ctx, after, limit)
}

// As TestAnOpenRacingACloseStartsFromTheCommittedEnd, but the opener does
// not learn that its OpenStream applied: its next open still takes the
// recovery from the metadata, not from the view it read the first time.
func TestAnOpenOfUnknownOutcomeRacingACloseLosesNothing(t *testing.T) {
	mem, store := memlog.New(), memstore.New()
	ctx := context.Background()
	holder := startProcess(t, mem, store, 2, 1)
	other := holder.create(t, "/other")
	s := holder.create(t, "/s")
	holder.appendTo(t, s, "a") // acknowledged, not committed: the end is 0
	lost := &lostOpenAck{MetaLog: mem, delay: 200 * time.Millisecond}
	x := takeOver(t, lost, store, 3, 1, holder) // sees s open on the live holder
	lost.armed.Store(true)
	done := make(chan error, 1)
	go func() { _, err := x.engine.Open(ctx, s); done <- err }()
	time.Sleep(50 * time.Millisecond)
	if err := holder.engine.Close(ctx, s); err != nil { // commits a, lets s go
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("x's first open succeeded: the test did not set up its case")
	}
	for _, b := range []string{"o1", "o2"} { // s's bulk retires on the holder
		holder.appendTo(t, other, b)
		if _, err := holder.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	x.plane.WaitFor(ctx, holder.plane.Applied())
	if st := x.stream(t, s); st.Owner != 3 || !st.Open || st.End != 1 || len(st.Unrecovered) != 0 {
		t.Fatalf("setup: %+v, want s opened by x (its open applied), [a] committed, nobody unrecovered", st)
	}
	if _, err := x.engine.Open(ctx, s); err != nil {
		t.Fatalf("x's second open: %v", err)
	}
	_, herr := holder.engine.byID(other).Append(ctx, ports.AppendRequest{Records: records("o3")})
	r, err := x.engine.byID(s).Append(ctx, ports.AppendRequest{Records: records("b")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, x, s)
	elsewhere := takeOver(t, mem, store, 4, 1, x)
	if other, err := elsewhere.engine.ReadCommitted(ctx, s, 0, 10); err != nil || len(other) == 0 || string(other[0].Body) != got[0] {
		t.Errorf("x serves s as %v, offset 0 is committed as %v (%v)", got, bodies(other), err)
	}
	if herr != nil {
		t.Errorf("the live holder cannot append any more (x fenced its WAL): %v", herr)
	}
	if r.First != 1 || len(got) != 2 || got[1] != "b" {
		t.Errorf("x acknowledged b at offset %d; s reads %v, want [a b]", r.First, got)
	}
}
