package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// appendTo appends bodies to stream id, failing the test if it cannot.
func (p *process) appendTo(t *testing.T, id uint64, bodies ...string) {
	t.Helper()
	if _, err := p.engine.byID(id).Append(context.Background(), ports.AppendRequest{Records: records(bodies...)}); err != nil {
		t.Fatal(err)
	}
}

// stream returns stream id as p's view holds it.
func (p *process) stream(t *testing.T, id uint64) *domain.Stream {
	t.Helper()
	v := p.plane.View()
	st, ok := v.Stream(id)
	if !ok {
		t.Fatalf("stream %d is not in the view", id)
	}
	return st
}

// holderAndWriter starts, on a fresh log and store, the lease holder (node
// 2) and then a writer (node 1) caught up with it. The holder sees the store
// through holderStore when that is not nil.
func holderAndWriter(t *testing.T, holderStore func(ports.ObjectStore) ports.ObjectStore) (
	ports.MetaLog, *memstore.Store, *process, *process) {
	t.Helper()
	log, store := memlog.New(), memstore.New()
	var seen ports.ObjectStore = store
	if holderStore != nil {
		seen = holderStore(store)
	}
	holder := startProcess(t, log, seen, 2, 1)
	return log, store, holder, takeOver(t, log, store, 1, 1, holder)
}

// When a process goes (here its node restarts), the lease holder's next
// maintenance pass takes over the streams whose records exist only in the
// gone process's WAL, commits them and lets them go, with no client asking;
// it leaves alone a stream whose records are all committed. The pass after
// deletes the gone WAL's bulks though that stream still names it, and the
// stream still opens and reads everything.
func TestGoneProcessesRecordsAreTakenOverWithoutAClient(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	holder := startProcess(t, log, store, 2, 1)
	holder.engine.deadWALPass(ctx) // nothing gone yet; the next pass runs on a node change alone
	old := takeOver(t, log, store, 1, 1, holder)
	partly, walOnly, committed := old.create(t, "/partly"), old.create(t, "/wal-only"), old.create(t, "/committed")
	old.appendTo(t, partly, "a")
	old.appendTo(t, committed, "c")
	if _, err := old.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	old.appendTo(t, partly, "a2")
	old.appendTo(t, walOnly, "b")
	// Node 1 restarts without handing its streams back.
	restarted := takeOver(t, log, store, 1, 2, old)
	holder.plane.WaitFor(ctx, restarted.plane.Applied())

	holder.engine.deadWALPass(ctx)
	for id, end := range map[uint64]uint64{partly: 2, walOnly: 1} {
		if st := holder.stream(t, id); st.End != end || st.Open {
			t.Fatalf("stream %d after the pass: end %d, open %v; want end %d, let go", id, st.End, st.Open, end)
		}
	}
	if st := holder.stream(t, committed); !st.Open || st.Owner != 1 || st.OwnerEpoch != 1 {
		t.Fatalf("the stream with nothing to recover was taken over: %+v", st)
	}
	gone := domain.WALPrefix(1, 1)
	if keys, fences := walKeysAndFences(t, store, gone); fences == len(keys) {
		t.Fatal("the first pass deleted the gone WAL's bulks before its takeovers were judged")
	}
	holder.engine.deadWALPass(ctx) // due: the first one took streams over
	if keys, fences := walKeysAndFences(t, store, gone); len(keys) == 0 || fences != len(keys) {
		t.Fatalf("the gone WAL holds %v, %d of them fences: want only fences", keys, fences)
	}
	restarted.plane.WaitFor(ctx, holder.plane.Applied())
	for id, want := range map[uint64]string{partly: "[a a2]", walOnly: "[b]", committed: "[c]"} {
		restarted.mustOpen(t, id)
		restarted.wantReads(t, id, want)
	}
}

// A stream that a live process opened and has not finished recovering is
// that process's to recover: the lease holder neither takes it over nor
// deletes the gone WAL it still needs, until the recovery is done.
func TestGoneWALStaysWhileALiveWriterRecoversFromIt(t *testing.T) {
	log, store, holder, old := holderAndWriter(t, nil)
	ctx := context.Background()
	id := old.create(t, "/s")
	old.appendTo(t, id, "a")
	live := startProcess(t, log, &failOnce{ObjectStore: store}, 3, 1)
	restarted := takeOver(t, log, store, 1, 2, old) // (1, 1) is gone
	live.plane.WaitFor(ctx, restarted.plane.Applied())
	live.openMustFail(t, id) // reading the gone WAL fails once: the recovery waits
	holder.plane.WaitFor(ctx, live.plane.Applied())

	n, _, err := holder.engine.RecoverDeadWALs(ctx, ctx)
	if err != nil || n != 0 {
		t.Fatalf("took over %d streams (%v) while the live writer recovers the only one", n, err)
	}
	if _, err := holder.engine.CollectDeadWALs(ctx); err != nil {
		t.Fatal(err)
	}
	gone := domain.WALPrefix(1, 1)
	if keys, fences := walKeysAndFences(t, store, gone); fences == len(keys) {
		t.Fatal("the gone WAL's bulks were deleted while a live writer still recovers from them")
	}
	live.mustOpen(t, id)
	live.wantReads(t, id, "[a]")
	holder.plane.WaitFor(ctx, live.plane.Applied())
	if _, _, err := holder.engine.RecoverDeadWALs(ctx, ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := holder.engine.CollectDeadWALs(ctx); err != nil || n == 0 {
		t.Fatalf("collected %d bulks (%v) once the recovery was done", n, err)
	}
}

// A takeover whose recovery failed after its open applied leaves the stream
// open on the lease holder but not in its memory; a later pass finishes it.
func TestAFailedTakeoverIsFinishedByALaterPass(t *testing.T) {
	log, store, holder, old := holderAndWriter(t, func(s ports.ObjectStore) ports.ObjectStore {
		return &dataGetFailsOnce{ObjectStore: s}
	})
	ctx := context.Background()
	id := old.create(t, "/s")
	old.appendTo(t, id, "a")
	if _, err := old.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	old.appendTo(t, id, "b") // only in (1, 1)'s WAL
	restarted := takeOver(t, log, store, 1, 2, old)
	holder.plane.WaitFor(ctx, restarted.plane.Applied())

	if _, _, err := holder.engine.RecoverDeadWALs(ctx, ctx); err == nil {
		t.Fatal("the first pass did not fail: the test did not set up its case")
	}
	for range 3 { // later passes, the store healthy again
		holder.engine.RecoverDeadWALs(ctx, ctx)
		holder.engine.CollectDeadWALs(ctx)
	}
	if st := holder.stream(t, id); st.End != 2 || st.Open {
		t.Fatalf("after later passes: end %d, open %v (owner %d/%d, unrecovered %v); want end 2, let go",
			st.End, st.Open, st.Owner, st.OwnerEpoch, st.Unrecovered)
	}
}

// A pass whose budget runs out stops starting takeovers, but those it
// started finish: their streams are let go, not left open on the holder.
func TestTakeoversStartedWithinThePassBudgetFinish(t *testing.T) {
	budget, cancel := context.WithCancel(context.Background())
	defer cancel()
	log, store, holder, old := holderAndWriter(t, func(s ports.ObjectStore) ports.ObjectStore {
		return &cancelOnPut{ObjectStore: s, prefix: domain.WALPrefix(2, 1), cancel: cancel}
	})
	a, b := old.create(t, "/a"), old.create(t, "/b")
	old.appendTo(t, a, "a")
	old.appendTo(t, b, "b")
	restarted := takeOver(t, log, store, 1, 2, old)
	holder.plane.WaitFor(context.Background(), restarted.plane.Applied())

	if _, _, err := holder.engine.RecoverDeadWALs(context.Background(), budget); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{a, b} {
		if st := holder.stream(t, id); st.Open && st.Owner == 2 {
			t.Errorf("stream %d left open on the lease holder after the pass budget ran out (end %d)", id, st.End)
		}
	}
}

// A deleted stream (kept for its fork) that still names a gone writer with
// records beyond its end needs no takeover (forks read committed records
// only) and does not keep that writer's WAL.
func TestADeletedStreamDoesNotHoldUpItsGoneWriter(t *testing.T) {
	log, store, holder, old := holderAndWriter(t, nil)
	ctx := context.Background()
	src := old.create(t, "/src")
	old.appendTo(t, src, "a")
	if err := old.engine.byID(src).CommitThrough(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if r, err := old.plane.ProposeOne(ctx, &domain.CreateFork{By: old.by, Name: "/fork", Source: src, At: 1}); err != nil || !r.OK() {
		t.Fatalf("fork: %v %v", r, err)
	}
	old.appendTo(t, src, "x") // only in (1, 1)'s WAL
	second := takeOver(t, log, &failOnce{ObjectStore: store}, 1, 2, old)
	second.openMustFail(t, src) // lists (1, 1) as unrecovered, then dies
	third := takeOver(t, log, store, 1, 3, second)
	if err := third.engine.Delete(ctx, src); err != nil {
		t.Fatal(err)
	}
	holder.plane.WaitFor(ctx, third.plane.Applied())
	if st := holder.stream(t, src); !st.SoftDeleted || !slices.Contains(st.Unrecovered, old.by) {
		t.Fatalf("the source is %+v: the test did not set up its case", st)
	}
	if _, _, err := holder.engine.RecoverDeadWALs(ctx, ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := holder.engine.CollectDeadWALs(ctx); err != nil || n == 0 {
		t.Fatalf("collected %d bulks (%v): the deleted source held up its gone writer's WAL", n, err)
	}
}

// dataGetFailsOnce fails the first Get of a data object.
type dataGetFailsOnce struct {
	ports.ObjectStore
	failed atomic.Bool
}

func (s *dataGetFailsOnce) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if strings.HasPrefix(key, "data/") && s.failed.CompareAndSwap(false, true) {
		return nil, errors.New("store hiccup")
	}
	return s.ObjectStore.Get(ctx, key, off, length)
}

// cancelOnPut cancels a context at the first put under prefix.
type cancelOnPut struct {
	ports.ObjectStore
	prefix string
	cancel context.CancelFunc
}

func (s *cancelOnPut) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if strings.HasPrefix(key, s.prefix) {
		s.cancel()
	}
	return s.ObjectStore.PutIfAbsent(ctx, key, body)
}

// heldLease is a maintenance lease this process always holds.
type heldLease struct{}

func (heldLease) Held() (uint64, bool) { return 1, true }

// blockedGets holds every Get of a key under prefix until release closes.
type blockedGets struct {
	ports.ObjectStore
	prefix  string
	release chan struct{}
}

func (s *blockedGets) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if strings.HasPrefix(key, s.prefix) {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.ObjectStore.Get(ctx, key, off, length)
}

// A dead-WAL pass that hangs (here reading the gone WAL) does not hold up
// the maintenance loop: the holder's own appends are still uploaded and
// committed meanwhile, and the pass finishes once the store answers.
func TestAHangingPassDoesNotHoldUpUploads(t *testing.T) {
	gone := domain.WALPrefix(1, 1)
	release := make(chan struct{})
	log, store, holder, old := holderAndWriter(t, func(s ports.ObjectStore) ports.ObjectStore {
		return &blockedGets{ObjectStore: s, prefix: gone, release: release}
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	walOnly := old.create(t, "/wal-only")
	old.appendTo(t, walOnly, "a")
	restarted := takeOver(t, log, store, 1, 2, old)
	holder.plane.WaitFor(ctx, restarted.plane.Applied())
	mine := holder.create(t, "/mine")
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		holder.engine.RunMaintenance(ctx, heldLease{}, 10*time.Millisecond, 10*time.Millisecond)
	}()
	time.Sleep(50 * time.Millisecond) // the pass has started, and hangs
	holder.appendTo(t, mine, "b")
	for deadline := time.Now().Add(5 * time.Second); holder.stream(t, mine).End != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the holder's own append was not committed while a dead-WAL pass hung")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := holder.stream(t, walOnly); st.End != 0 {
		t.Fatalf("the gone WAL's record was committed (end %d) though reading it hangs: the test did not set up its case", st.End)
	}
	close(release)
	for deadline := time.Now().Add(5 * time.Second); holder.stream(t, walOnly).End != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the pass did not take the stream over once the store answered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-loopDone
}

// Reading a gone WAL holds the lock that client opens recovering from other
// gone WALs need: a read that hangs ends with the pass's budget.
func TestAHangingGoneWALReadEndsWithThePassBudget(t *testing.T) {
	gone := domain.WALPrefix(1, 1)
	release := make(chan struct{})
	defer close(release)
	log, store, holder, old := holderAndWriter(t, func(s ports.ObjectStore) ports.ObjectStore {
		return &blockedGets{ObjectStore: s, prefix: gone, release: release}
	})
	old.appendTo(t, old.create(t, "/s"), "a")
	restarted := takeOver(t, log, store, 1, 2, old)
	holder.plane.WaitFor(context.Background(), restarted.plane.Applied())
	budget, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, _, err := holder.engine.RecoverDeadWALs(context.Background(), budget); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the pass read the gone WAL though its reads hang: the test did not set up its case")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a pass whose gone-WAL read hangs outlived its budget")
	}
}

// deadWALPass runs a dead-WAL pass here, in the caller's goroutine, if one
// is due (the maintenance loop runs it beside itself: startDeadWALPass).
func (e *Engine) deadWALPass(ctx context.Context) {
	if e.deadWALPassDue() {
		e.runDeadWALPass(ctx)
	}
}
