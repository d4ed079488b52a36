package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// slowLog delays appends to the metadata log while delay is set: every
// append, or with only set, those of rows holding such a command.
type slowLog struct {
	ports.MetaLog
	delay atomic.Int64 // nanoseconds
	only  func(domain.Command) bool
}

func (l *slowLog) Append(ctx context.Context, index uint64, payload []byte) error {
	if d := time.Duration(l.delay.Load()); d > 0 && l.slows(payload) {
		time.Sleep(d)
	}
	return l.MetaLog.Append(ctx, index, payload)
}

func (l *slowLog) slows(payload []byte) bool {
	if l.only == nil {
		return true
	}
	cmds, _ := domain.DecodeRow(payload)
	for _, c := range cmds {
		if l.only(c) {
			return true
		}
	}
	return false
}

// closeUnknown appends to a new stream with a producer, commits it, and then
// closes it while the log is slow, so that Close gives up (outcome unknown).
// With hold, another proposal occupies the log first, so the close is
// abandoned before it is written; otherwise it is written after Close
// returned.
func closeUnknown(t *testing.T, hold bool) (*process, uint64) {
	t.Helper()
	return closeUnknownAfter(t, hold, func(*process, uint64) {})
}

// closeUnknownAfter is closeUnknown with before run once the records are
// committed, before the close.
func closeUnknownAfter(t *testing.T, hold bool, before func(*process, uint64)) (*process, uint64) {
	t.Helper()
	log := &slowLog{MetaLog: memlog.New()}
	p := startProcess(t, log, memstore.New(), 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	p.appendFirst(t, id, "a")
	if err := p.engine.byID(id).CommitThrough(ctx, 1); err != nil {
		t.Fatal(err)
	}
	before(p, id)
	log.delay.Store(int64(200 * time.Millisecond))
	if hold {
		go p.plane.ProposeOne(ctx, &domain.ReserveObjects{By: p.by, Count: 1, TTLMs: 1000, NowMs: 1})
		time.Sleep(20 * time.Millisecond)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := p.engine.Close(short, id); err == nil {
		t.Fatal("Close succeeded though the log was too slow for its deadline")
	}
	// Whatever became of the close, no append is acknowledged meanwhile.
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("late")}); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("append after a close of unknown outcome: %v, want ErrNotLocal", err)
	}
	time.Sleep(400 * time.Millisecond) // the log catches up
	log.delay.Store(0)
	return p, id
}

func TestCloseOfUnknownOutcomeThatApplied(t *testing.T) {
	p, id := closeUnknown(t, false)
	v := p.plane.View()
	if st, _ := v.Stream(id); st.Open {
		t.Fatal("the close was not written after all: the test did not set up its case")
	}
	checkReopened(t, p, id)
}

func TestCloseOfUnknownOutcomeThatDidNotApply(t *testing.T) {
	p, id := closeUnknown(t, true)
	v := p.plane.View()
	if st, _ := v.Stream(id); !st.Open {
		t.Fatal("the close was written after all: the test did not set up its case")
	}
	checkReopened(t, p, id)
}

// A writer whose close for a transfer had an unknown outcome, and did not
// apply, may open the stream again and serve it until it lets go: the
// pending transfer refuses every other node but the target, not the
// writer, and stays pending.
func TestWriterReopensDuringATransferAfterACloseInDoubt(t *testing.T) {
	ctx := context.Background()
	p, id := closeUnknownAfter(t, true, func(p *process, id uint64) {
		for _, c := range []domain.Command{
			&domain.RegisterNode{Node: 2, Epoch: 1, Address: "http://node2", Slots: 1},
			&domain.StartTransfer{By: p.by, Stream: id, To: 2},
		} {
			if r, err := p.plane.ProposeOne(ctx, c); err != nil || !r.OK() {
				t.Fatalf("%T: %v %v", c, r, err)
			}
		}
	})
	v := p.plane.View()
	if st, _ := v.Stream(id); !st.Open {
		t.Fatal("the close was written after all: the test did not set up its case")
	}
	checkReopened(t, p, id)
	if err := p.engine.Close(ctx, id); err != nil {
		t.Fatalf("letting the stream go after reopening it: %v", err)
	}
	v = p.plane.View()
	if st, _ := v.Stream(id); st.Open || v.PendingTransfer(st) != 2 {
		t.Fatalf("stream after the close: %+v, want closed and still transferring to node 2", *st)
	}
}

// checkReopened opens the stream again on the same process: it resumes at
// the committed tail with the producer's dedup state.
func checkReopened(t *testing.T, p *process, id uint64) {
	t.Helper()
	ctx := context.Background()
	p.mustOpen(t, id)
	p.retryFirst(t, id, "the producer's retry after reopening", "a")
	res, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("b")})
	if err != nil || res.First != 1 {
		t.Fatalf("append after reopening: %+v %v, want offset 1", res, err)
	}
}

// A stream opened again while its close is still in doubt takes appends at
// a new epoch, which makes the pending close stale: an append acknowledged
// then is not lost to the next owner when the close would have applied.
func TestAppendWhileACloseIsInDoubtIsKept(t *testing.T) {
	log := &slowLog{MetaLog: memlog.New()}
	store := memstore.New()
	p := startProcess(t, log, store, 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("a")}); err != nil {
		t.Fatal(err)
	}
	if err := p.engine.byID(id).CommitThrough(ctx, 1); err != nil {
		t.Fatal(err)
	}
	log.delay.Store(int64(200 * time.Millisecond))
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := p.engine.Close(short, id); err == nil {
		t.Fatal("Close succeeded though the log was too slow for its deadline")
	}
	// The close is still being written: open again and append at once.
	p.mustOpen(t, id)
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("late")}); err != nil {
		t.Fatal(err)
	}
	log.delay.Store(0)
	if err := p.engine.Close(ctx, id); err != nil {
		t.Fatalf("clean close after the reopening: %v", err)
	}
	next := startProcess(t, log, store, 2, 1)
	next.mustOpen(t, id)
	next.wantReads(t, id, "[a late]")
}

// failOnce fails the first List of the WAL key space, as a store that
// hiccups during a takeover.
type failOnce struct {
	ports.ObjectStore
	failed atomic.Bool
}

func (s *failOnce) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	if strings.HasPrefix(prefix, "wal/") && s.failed.CompareAndSwap(false, true) {
		return nil, errors.New("store hiccup")
	}
	return s.ObjectStore.List(ctx, prefix, after, limit)
}

// diedWithA has a process append "a" to a new stream and die without
// committing it; it returns the log, the store and the stream.
func diedWithA(t *testing.T) (ports.MetaLog, *memstore.Store, uint64) {
	t.Helper()
	log, mem := memlog.New(), memstore.New()
	old := startProcess(t, log, mem, 1, 1)
	id := old.create(t, "/s")
	if _, err := old.engine.byID(id).Append(context.Background(), ports.AppendRequest{Records: records("a")}); err != nil {
		t.Fatal(err)
	}
	return log, mem, id
}

// A takeover whose recovery fails after its OpenStream applied finishes the
// recovery on the next open, from the predecessor the metadata no longer
// names, instead of opening the stream from its data objects alone.
func TestTakeoverFinishesAFailedRecovery(t *testing.T) {
	log, mem, id := diedWithA(t)
	// The node comes back at epoch 2 and takes over.
	next := startProcess(t, log, &failOnce{ObjectStore: mem}, 1, 2)
	next.openMustFail(t, id)
	next.mustOpen(t, id)
	next.wantReads(t, id, "[a]")
}

// putsRefused refuses the PutIfAbsent of every key refuse picks.
type putsRefused struct {
	ports.ObjectStore
	refuse func(key string) bool
}

func (s putsRefused) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if s.refuse(key) {
		return errors.New("store refuses")
	}
	return s.ObjectStore.PutIfAbsent(ctx, key, body)
}

// walPutsFail fails every WAL put under prefix: one process's WAL is dead.
func walPutsFail(s ports.ObjectStore, prefix string) putsRefused {
	return putsRefused{s, func(key string) bool { return strings.HasPrefix(key, prefix) }}
}

// dataPutsFail fails every data-object put: commits cannot happen.
func dataPutsFail(s ports.ObjectStore) putsRefused {
	return putsRefused{s, func(key string) bool { return !strings.HasPrefix(key, "wal/") }}
}

// walKeyFails refuses the put of one WAL key.
func walKeyFails(s ports.ObjectStore, walKey string) putsRefused {
	return putsRefused{s, func(key string) bool { return key == walKey }}
}

// A recovery retried after its rewrite failed still has the predecessor's
// frames (the fenced WAL's cache hands them out once): the retry fails or
// recovers them, and never opens the stream without them.
func TestRetriedRecoveryKeepsThePredecessorsFrames(t *testing.T) {
	log, mem := memlog.New(), memstore.New()
	old := startProcess(t, log, mem, 1, 1)
	ctx := context.Background()
	s1, s2 := old.create(t, "/s1"), old.create(t, "/s2")
	for _, id := range []uint64{s1, s2} {
		if _, err := old.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("a")}); err != nil {
			t.Fatal(err)
		}
	}
	next := startProcess(t, log, walPutsFail(mem, domain.WALPrefix(1, 2)), 1, 2)
	next.openMustFail(t, s1)
	if _, err := next.engine.Open(ctx, s1); err == nil {
		if got := readAll(t, next, s1); fmt.Sprint(got) != "[a]" {
			t.Fatalf("the retried open succeeded and reads %v, want [a]", got)
		}
	}
}

// A handoff finishes a recovery a failed open left, so the next writer,
// which reads only this process's WAL, still has the predecessor's records.
func TestHandoffFinishesAFailedRecovery(t *testing.T) {
	log, mem, id := diedWithA(t)
	ctx := context.Background()
	next := startProcess(t, log, &failOnce{ObjectStore: mem}, 1, 2)
	next.openMustFail(t, id)
	if err := next.engine.CloseAll(ctx); err != nil {
		t.Fatal(err)
	}
	third := startProcess(t, log, mem, 2, 1)
	third.mustOpen(t, id)
	third.wantReads(t, id, "[a]")
}

// A writer that dies while recovering leaves its predecessor listed in the
// metadata: the next takeover reads both WALs, so the first writer's
// acknowledged records survive two failures.
func TestTakeoverAfterAWriterDiedRecovering(t *testing.T) {
	log, mem, id := diedWithA(t)
	next := startProcess(t, log, &failOnce{ObjectStore: mem}, 1, 2)
	next.openMustFail(t, id)
	// next dies with its recovery unfinished; the node restarts again.
	third := startProcess(t, log, mem, 1, 3)
	third.mustOpen(t, id)
	third.wantReads(t, id, "[a]")
	if v := third.plane.View(); !hasNoneUnrecovered(&v, id) {
		t.Fatal("the recovered stream still lists earlier writers as unrecovered")
	}
}

func hasNoneUnrecovered(v *domain.State, id uint64) bool {
	st, ok := v.Stream(id)
	return ok && len(st.Unrecovered) == 0
}

// twoEpochState holds stream 1 with [0,20) committed at stream epoch 1 and
// [20,25) at epoch 2.
func twoEpochState(t *testing.T) (domain.State, *domain.Stream) {
	t.Helper()
	s := domain.NewState()
	w1, w2 := domain.Proposer{Node: 1, Epoch: 1}, domain.Proposer{Node: 1, Epoch: 2}
	for _, c := range []domain.Command{
		&domain.RegisterNode{Node: 1, Epoch: 1, Address: "x", Slots: 4},
		&domain.CreateStream{By: w1, Name: "/s", Open: true},
		&domain.ReserveObjects{By: w1, Count: 2, TTLMs: 1000},
		&domain.CommitObjects{By: w1, Objects: []domain.ObjectSpec{{ID: 1, Size: 1,
			Ranges: []domain.Range{{Stream: 1, Epoch: 1, Start: 0, End: 20}}}}},
		&domain.RegisterNode{Node: 1, Epoch: 2, Address: "x", Slots: 4},
		&domain.OpenStream{By: w2, Stream: 1, Epoch: 2},
		&domain.CommitObjects{By: w2, Objects: []domain.ObjectSpec{{ID: 2, Size: 1,
			Ranges: []domain.Range{{Stream: 1, Epoch: 2, Start: 20, End: 25}}}}},
	} {
		if r := s.Apply(c); !r.OK() {
			t.Fatalf("%T: %v", c, r)
		}
	}
	st, _ := s.Stream(1)
	return s, st
}

// An earlier writer's frames stop where a later epoch wrote: past that they
// hold records never acknowledged (read past a hole in its WAL).
func TestSupersedeDropsWhatALaterEpochWrote(t *testing.T) {
	s, st := twoEpochState(t)
	frame := func(epoch, off, n uint64) domain.Frame {
		return domain.Frame{Stream: 1, Epoch: epoch, Offset: off, Records: make([]domain.Record, n)}
	}
	frames := []domain.Frame{frame(1, 15, 5), frame(1, 20, 2), frame(1, 22, 8), frame(2, 25, 3)}
	var got []string
	for _, f := range supersede(frames, &s, st) {
		got = append(got, fmt.Sprintf("%d@%d-%d", f.Epoch, f.Offset, f.End()))
	}
	if fmt.Sprint(got) != "[1@15-20 2@25-28]" {
		t.Fatalf("kept %v, want [1@15-20 2@25-28]", got)
	}
}

// An open of ours that applied, though this process does not remember its
// recovery (it retried from a view that predated it), is recovered when the
// stream is next opened here: the earlier writer is still listed.
func TestOwnOpenWithoutItsRecoveryIsRecovered(t *testing.T) {
	log, mem, id := diedWithA(t)
	ctx := context.Background()
	next := startProcess(t, log, mem, 1, 2)
	if r, err := next.plane.ProposeOne(ctx, &domain.OpenStream{By: next.by, Stream: id, Epoch: 2}); err != nil || !r.OK() {
		t.Fatal(r, err)
	}
	next.mustOpen(t, id)
	if _, err := next.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("b")}); err != nil {
		t.Fatal(err)
	}
	next.wantReads(t, id, "[a b]")
}

// A takeover that could not commit what it recovered, and then died, still
// hands the producer state on: its WAL holds the recovered frames one for
// one, stamps included.
func TestProducerStateSurvivesAnUncommittedRecovery(t *testing.T) {
	log, mem := memlog.New(), memstore.New()
	ctx := context.Background()
	first := startProcess(t, log, mem, 1, 1)
	id := first.create(t, "/s")
	first.appendFirst(t, id, "a")
	second := startProcess(t, log, dataPutsFail(mem), 1, 2)
	if _, err := second.engine.Open(ctx, id); err != nil {
		t.Fatal(err) // the failed commit is only logged
	}
	third := startProcess(t, log, mem, 1, 3)
	third.mustOpen(t, id)
	third.retryFirst(t, id, "producer retry after two takeovers", "a")
}

// A later epoch's committed range counts even when it lies wholly below
// the older frames: its writer recovered them, so they are dropped.
func TestSupersedeCountsRangesBelowTheFrames(t *testing.T) {
	s, st := twoEpochState(t)
	frames := []domain.Frame{{Stream: 1, Epoch: 1, Offset: 25, Records: make([]domain.Record, 3)}}
	if kept := supersede(frames, &s, st); len(kept) != 0 {
		t.Fatalf("kept %d epoch-1 frames at 25 though epoch 2 wrote from 20", len(kept))
	}
}

// A takeover's rewrite of what it recovered is one bulk: a crash after part
// of it was stored would leave the next takeover finding some recovered
// frames at the newer epoch, which drop the older WAL's (supersede), and
// missing the rest.
func TestARewriteIsStoredWhole(t *testing.T) {
	log, mem := memlog.New(), memstore.New()
	ctx := context.Background()
	first := startProcess(t, log, mem, 1, 1)
	id := first.create(t, "/s")
	for _, b := range []string{"a", "b"} {
		if _, err := first.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records(b)}); err != nil {
			t.Fatal(err)
		}
	}
	// The second process stores its first bulk, not its second, and no
	// data object: then it dies, whatever its open said.
	second := startProcess(t, log, walKeyFails(dataPutsFail(mem), domain.WALKey(1, 2, 2)), 1, 2)
	_, _ = second.engine.Open(ctx, id) // it fails with the rewrite split in two bulks
	v := second.plane.View()
	if st, _ := v.Stream(id); st.Epoch != 2 || st.End != 0 {
		t.Fatalf("setup: stream %+v, want it opened by the second process and nothing committed", st)
	}
	third := startProcess(t, log, mem, 1, 3)
	third.mustOpen(t, id)
	third.wantReads(t, id, "[a b]")
}

// Records a takeover recovered count in the uncommitted budget until they
// are committed, as appended ones do.
func TestRecoveredRecordsCountAsUncommitted(t *testing.T) {
	log, mem, id := diedWithA(t)
	next := startProcess(t, log, dataPutsFail(mem), 1, 2)
	if _, err := next.engine.Open(context.Background(), id); err != nil {
		t.Fatal(err) // the failed commit is only logged
	}
	next.engine.roomMu.Lock()
	defer next.engine.roomMu.Unlock()
	if want := recordsSize(records("a")); next.engine.uncommitted != want {
		t.Fatalf("uncommitted %d bytes after recovering one record, want %d", next.engine.uncommitted, want)
	}
}

// refusesLog refuses every row holding a command refuse picks.
type refusesLog struct {
	ports.MetaLog
	refuse func(domain.Command) bool
}

func (l *refusesLog) Append(ctx context.Context, index uint64, payload []byte) error {
	cmds, _ := domain.DecodeRow(payload)
	for _, c := range cmds {
		if l.refuse(c) {
			return errors.New("log refuses")
		}
	}
	return l.MetaLog.Append(ctx, index, payload)
}

// An older WAL can hold a frame never acknowledged, stored past a hole,
// that lines up with where a later writer's committed records end. A
// takeover that still lists that older writer (the later one's
// RecoveredStream failed) must not take it for the stream's next record.
func TestAStaleFrameOfAnOlderWALIsNotRecovered(t *testing.T) {
	inner, mem := memlog.New(), memstore.New()
	log := &refusesLog{MetaLog: inner, refuse: func(c domain.Command) bool {
		_, ok := c.(*domain.RecoveredStream)
		return ok
	}}
	ctx := context.Background()
	first := startProcess(t, log, mem, 1, 1)
	id := first.create(t, "/s")
	if _, err := first.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("a")}); err != nil {
		t.Fatal(err) // bulk 1
	}
	// Bulk 3, in flight past bulk 2 when the process died, landed: a frame
	// at offset 2 that nobody acknowledged.
	stale := domain.AppendBulkHeader(nil, domain.BulkHeader{Node: 1, Epoch: 1, Seq: 3})
	stale = domain.AppendFrame(stale, &domain.Frame{Stream: id, Epoch: 1, Offset: 2, Records: records("stale")})
	if err := mem.PutIfAbsent(ctx, domain.WALKey(1, 1, 3), stale); err != nil {
		t.Fatal(err)
	}
	second := takeOver(t, log, mem, 1, 2, first)
	second.mustOpen(t, id)
	if _, err := second.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("b")}); err != nil {
		t.Fatal(err)
	}
	if err := second.engine.byID(id).CommitThrough(ctx, 2); err != nil {
		t.Fatal(err) // [a b] committed at epoch 2: the stale frame starts at its end
	}
	third := takeOver(t, log, mem, 1, 3, second)
	v := third.plane.View()
	if st, _ := v.Stream(id); len(st.Unrecovered) == 0 || st.End != 2 {
		t.Fatalf("setup: stream %+v, want the first writer still listed and [a b] committed", st)
	}
	third.mustOpen(t, id)
	third.wantReads(t, id, "[a b]")
}
