package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func readAll(t testing.TB, p *process, id uint64) []string {
	t.Helper()
	var out []string
	for off := uint64(0); ; {
		r, err := p.engine.byID(id).Read(context.Background(), off, 7)
		recs := r.Records
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return out
		}
		out = append(out, bodies(recs)...)
		off += uint64(len(recs))
	}
}

func walKeys(t *testing.T, store *memstore.Store, p *process) int {
	t.Helper()
	objs, err := store.List(context.Background(), domain.WALPrefix(p.by.Node, p.by.Epoch), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(objs)
}

// TestUploadCommitsTrimsMemoryAndRetiresWAL: after an upload, old records
// are read back from the data object, the stream's end advanced in the
// metadata, and only the newest WAL bulk is left.
func TestUploadCommitsTrimsMemoryAndRetiresWAL(t *testing.T) {
	store := memstore.New()
	p := startProcess(t, memlog.New(), store, 1, 1)
	p.engine.cfg.TailRecords = 4
	a, b := p.create(t, "/a"), p.create(t, "/b")
	ctx := context.Background()
	var want []string
	for i := range 30 {
		want = append(want, fmt.Sprint(i))
		for _, id := range []uint64{a, b} {
			if _, err := p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := walKeys(t, store, p)
	n, err := p.engine.Upload(ctx)
	if err != nil || n != 60 {
		t.Fatalf("upload: %d records, %v", n, err)
	}
	v := p.plane.View()
	for _, id := range []uint64{a, b} {
		if st, _ := v.Stream(id); st.End != 30 {
			t.Fatalf("stream %d ends at %d in the metadata", id, st.End)
		}
		if got := readAll(t, p, id); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("stream %d reads %v", id, got)
		}
	}
	if s, _ := p.engine.local(a); s.base != 26 || len(s.records) != 4 {
		t.Fatalf("memory keeps [%d, +%d), want the 4 newest", s.base, len(s.records))
	}
	if after := walKeys(t, store, p); after != 1 || before < 2 {
		t.Fatalf("WAL bulks: %d before, %d after retiring, want only the newest left", before, after)
	}
}

// TestUploadKeepsATailBoundInBytes: large committed records leave memory
// once their bytes pass TailBytes, however few they are, and are read back
// from the data object.
func TestUploadKeepsATailBoundInBytes(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	p.engine.cfg.TailRecords, p.engine.cfg.TailBytes = 100, 5<<10 // two records of about 2 KiB
	id := p.create(t, "/big")
	ctx := context.Background()
	var want []string
	for i := range 10 {
		body := fmt.Sprintf("%d-%s", i, strings.Repeat("x", 1000))
		want = append(want, body)
		if _, err := p.engine.byID(id).appendRecords(ctx, records(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := p.engine.Upload(ctx); err != nil || n != 10 {
		t.Fatalf("upload: %d records, %v", n, err)
	}
	s, _ := p.engine.local(id)
	kept := 0
	for i := range s.records {
		kept += s.records[i].Size()
	}
	if s.base != 8 || len(s.records) != 2 || kept > p.engine.cfg.TailBytes {
		t.Fatalf("memory keeps [%d, +%d), %d bytes; want the 2 newest, within %d bytes", s.base, len(s.records), kept, p.engine.cfg.TailBytes)
	}
	if got := readAll(t, p, id); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("reads %d records, want %d", len(got), len(want))
	}
}

// TestRecoveryCombinesDataObjectsAndWAL: a restart after an upload recovers
// committed records from data objects, newer ones from the WAL, and the
// producer state from both.
func TestRecoveryCombinesDataObjectsAndWAL(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	ctx := context.Background()
	stamp := func(seq uint64) *domain.ProducerStamp { return &domain.ProducerStamp{ID: "p", Epoch: 1, Seq: seq} }
	for i := range 5 {
		if _, err := old.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), stamp(uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := old.engine.byID(id).appendRecords(ctx, records("5"), nil); err != nil {
		t.Fatal(err)
	}
	next := takeOver(t, log, store, 1, 2, old)
	next.mustOpen(t, id)
	if got := readAll(t, next, id); strings.Join(got, ",") != "0,1,2,3,4,5" {
		t.Fatalf("recovered %v", got)
	}
	r, err := next.engine.byID(id).appendRecords(ctx, records("4"), stamp(4))
	if err != nil || !r.Duplicate {
		t.Fatalf("retry of an uploaded producer append: %+v %v, want a duplicate", r, err)
	}
}

// TestCloseHandsOverWithoutFencing: a stream closed by its live writer is
// opened elsewhere from data objects alone; the old writer's WAL keeps
// working for its other streams.
func TestCloseHandsOverWithoutFencing(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	a := startProcess(t, log, store, 1, 1)
	moving, staying := a.create(t, "/moving"), a.create(t, "/staying")
	ctx := context.Background()
	for i := range 3 {
		a.engine.byID(moving).appendRecords(ctx, records(fmt.Sprint(i)), nil)
	}
	if err := a.engine.Close(ctx, moving); err != nil {
		t.Fatal(err)
	}
	b := takeOver(t, log, store, 2, 1, a)
	b.mustOpen(t, moving)
	if got := readAll(t, b, moving); strings.Join(got, ",") != "0,1,2" {
		t.Fatalf("node 2 reads %v", got)
	}
	if _, err := a.engine.byID(staying).appendRecords(ctx, records("x"), nil); err != nil {
		t.Fatalf("node 1's WAL was fenced by a clean handoff: %v", err)
	}
}

// TestAppendsMakeRoomWithoutAMaintenanceLoop: once MaxUncommittedBytes are
// waiting for upload, an append uploads by itself instead of waiting for a
// loop that may not run.
func TestAppendsMakeRoomWithoutAMaintenanceLoop(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	p.engine.cfg.MaxUncommittedBytes = 4 << 10
	id := p.create(t, "/s")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 64 {
		if _, err := p.engine.byID(id).appendRecords(ctx, []domain.Record{{Body: make([]byte, 1024)}}, nil); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if v := p.plane.View(); v.StreamCount() != 1 {
		t.Fatal("stream vanished")
	} else if st, _ := v.Stream(id); st.End == 0 {
		t.Fatal("nothing was uploaded while appends waited for room")
	}
}

// Under steady appends, one Upload writes one data object, not a stream of
// small ones chasing the appends (each would cost a PUT, two proposals and,
// later, compaction).
func TestUploadUnderLoadWritesOneObject(t *testing.T) {
	store := memstore.New()
	p := startProcessTB(t, store)
	id := p.create(t, "/s")
	ctx := context.Background()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("x")}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(20 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := p.engine.Upload(short); err != nil {
		t.Fatalf("upload under load: %v", err)
	}
	objects, err := store.List(ctx, "data/", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 1 {
		t.Fatalf("one Upload under load wrote %d data objects, want 1", len(objects))
	}
}

// A commit whose outcome was unknown but which applied leaves the stream's
// committed end ahead of what the process knows: the next upload adopts it
// instead of failing to commit (and writing a new object) forever.
func TestUploadAdoptsACommitThatAppliedUnseen(t *testing.T) {
	log := &slowLog{MetaLog: memlog.New(), only: func(c domain.Command) bool {
		_, ok := c.(*domain.CommitObjects)
		return ok
	}}
	store := memstore.New()
	p := startProcess(t, log, store, 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("a", "b")}); err != nil {
		t.Fatal(err)
	}
	log.delay.Store(int64(200 * time.Millisecond))
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.engine.Upload(short); err == nil {
		t.Fatal("upload succeeded though its commit outlived the deadline")
	}
	time.Sleep(400 * time.Millisecond) // the commit applies
	log.delay.Store(0)
	v := p.plane.View()
	if st, _ := v.Stream(id); st.End != 2 {
		t.Fatalf("the commit did not apply: the test did not set up its case")
	}
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("c")}); err != nil {
		t.Fatal(err)
	}
	other := p.create(t, "/t") // committed normally in the same pass
	if _, err := p.engine.byID(other).Append(ctx, ports.AppendRequest{Records: records("t")}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	s, _ := p.engine.local(id)
	if got := s.committedThrough(); got != 3 {
		t.Fatalf("committed through %d after one upload, want 3", got)
	}
	if o, _ := p.engine.local(other); o.committedThrough() != 1 {
		t.Fatalf("the other stream committed through %d, want 1", o.committedThrough())
	}
	p.wantReads(t, id, "[a b c]")
}

// TestUploadReleasesWhatAppendsCounted: once everything appended is in data
// objects, no uncommitted bytes are left counted, also when the upload
// drops records from memory beyond the tail bound (a count that drifted
// would make appends wait for room forever).
func TestUploadReleasesWhatAppendsCounted(t *testing.T) {
	p := startProcessTB(t, memstore.New())
	ctx := context.Background()
	id := p.create(t, "/s")
	for range 3 {
		for i := range 200 {
			// Sizes differ, so that counting records other than those
			// appended (slots reused too early) shows.
			if _, err := p.engine.byID(id).appendRecords(ctx, []domain.Record{{Body: make([]byte, 1000+i)}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.engine.Upload(ctx); err != nil {
			t.Fatal(err)
		}
		p.engine.roomMu.Lock()
		left := p.engine.uncommitted
		p.engine.roomMu.Unlock()
		if left != 0 {
			t.Fatalf("%d bytes still counted as uncommitted after the upload", left)
		}
	}
}

// TestCommitToLeavesCollectedRecordsAlone: dropping committed records from
// memory must not touch the records an upload collected, which it counts
// (and releases) after the commit.
func TestCommitToLeavesCollectedRecordsAlone(t *testing.T) {
	p := startProcessTB(t, memstore.New())
	ctx := context.Background()
	id := p.create(t, "/s")
	for i := range 200 {
		if _, err := p.engine.byID(id).appendRecords(ctx, []domain.Record{{Body: []byte(fmt.Sprint(i))}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	parts, _ := p.engine.collect()
	if len(parts) != 1 {
		t.Fatalf("%d parts, want 1", len(parts))
	}
	before := bodies(parts[0].frame.Records)
	parts[0].s.commitTo(parts[0].frame.End(), 10, 1<<20)
	if after := bodies(parts[0].frame.Records); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("collected records changed by commitTo: %v..., want %v...", after[:5], before[:5])
	}
}
