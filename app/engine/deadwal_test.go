package engine

import (
	"context"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
)

// appendTo appends bodies to stream id, failing the test if it cannot.
func (p *process) appendTo(t *testing.T, id uint64, bodies ...string) {
	t.Helper()
	if _, err := p.engine.AppendWith(context.Background(), id, records(bodies...), AppendOptions{}); err != nil {
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
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	holder := startProcess(t, log, store, 2, 1)
	old := takeOver(t, log, store, 1, 1, holder)
	id := old.create(t, "/s")
	old.appendTo(t, id, "a")
	live := startProcess(t, log, &failOnce{ObjectStore: store}, 3, 1)
	restarted := takeOver(t, log, store, 1, 2, old) // (1, 1) is gone
	live.plane.WaitFor(ctx, restarted.plane.Applied())
	live.openMustFail(t, id) // reading the gone WAL fails once: the recovery waits
	holder.plane.WaitFor(ctx, live.plane.Applied())

	n, _, err := holder.engine.RecoverDeadWALs(ctx)
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
	if _, _, err := holder.engine.RecoverDeadWALs(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := holder.engine.CollectDeadWALs(ctx); err != nil || n == 0 {
		t.Fatalf("collected %d bulks (%v) once the recovery was done", n, err)
	}
}
