package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// process is one node process: its plane, WAL and engine.
type process struct {
	plane  *meta.Plane
	wal    *wal.WAL
	engine *Engine
	by     domain.Proposer
}

func startProcessTB(tb testing.TB, store ports.ObjectStore) *process {
	return startProcess(tb, memlog.New(), store, 1, 1)
}

func (p *process) createB(tb testing.TB, i int) uint64 {
	return p.create(tb, fmt.Sprintf("/bench/%d", i))
}

func startProcess(t testing.TB, log ports.MetaLog, store ports.ObjectStore, node domain.NodeID, epoch uint64) *process {
	t.Helper()
	return startProcessWAL(t, log, store, node, epoch, wal.Config{RetryFor: time.Second})
}

// startProcessWAL is startProcess with its WAL tuned by cfg, whose store and
// identity it fills in.
func startProcessWAL(t testing.TB, log ports.MetaLog, store ports.ObjectStore, node domain.NodeID, epoch uint64,
	cfg wal.Config) *process {
	t.Helper()
	// A log that fails an append fails it fast (refusesLog).
	plane, err := meta.Open(context.Background(), meta.Config{Log: log, PollInterval: 5 * time.Millisecond,
		AppendTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plane.Close() })
	r, err := plane.ProposeOne(context.Background(), &domain.RegisterNode{Node: node, Epoch: epoch, Address: "x", Slots: 1})
	if err != nil || !r.OK() {
		t.Fatalf("register: %v %v", r, err)
	}
	by := domain.Proposer{Node: node, Epoch: epoch}
	if r, err := plane.ProposeOne(context.Background(), domain.DeclareLevel(by, domain.LevelCurrent)); err != nil || !r.OK() {
		t.Fatalf("declare the level: %v %v", r, err) // as a node does once registered
	}
	cfg.Store, cfg.Node, cfg.Epoch = store, node, epoch
	w := wal.Open(cfg)
	return &process{plane: plane, wal: w, by: by,
		engine: New(Config{Plane: plane, By: by, Store: store, WAL: w})}
}

// takeOver starts process (node, epoch) on log and store after prev, caught
// up with everything prev applied.
func takeOver(t testing.TB, log ports.MetaLog, store ports.ObjectStore, node domain.NodeID, epoch uint64, prev *process) *process {
	t.Helper()
	p := startProcess(t, log, store, node, epoch)
	p.plane.WaitFor(context.Background(), prev.plane.Applied())
	return p
}

// mustOpen opens stream id, failing the test if it cannot.
func (p *process) mustOpen(t testing.TB, id uint64) {
	t.Helper()
	if _, err := p.engine.Open(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// firstStamp is producer "p"'s stamp on its first append.
func firstStamp() *domain.ProducerStamp { return &domain.ProducerStamp{ID: "p", Epoch: 1, Seq: 0} }

// appendFirst makes producer "p"'s first append, of bodies, to stream id.
func (p *process) appendFirst(t testing.TB, id uint64, bodies ...string) {
	t.Helper()
	if _, err := p.engine.byID(id).appendRecords(context.Background(), records(bodies...), firstStamp()); err != nil {
		t.Fatal(err)
	}
}

// retryFirst retries producer "p"'s first append, of bodies, to stream id,
// failing the test (with what) unless it is answered as a duplicate.
func (p *process) retryFirst(t testing.TB, id uint64, what string, bodies ...string) ports.AppendResult {
	t.Helper()
	r, err := p.engine.byID(id).appendRecords(context.Background(), records(bodies...), firstStamp())
	if err != nil || !r.Duplicate {
		t.Fatalf("%s: %+v %v, want a duplicate (stream reads %v)", what, r, err, readAll(t, p, id))
	}
	return r
}

// openMustFail opens stream id on a process whose store the test made
// fail that open: if it succeeds, the test did not set up its case.
func (p *process) openMustFail(t testing.TB, id uint64) {
	t.Helper()
	if _, err := p.engine.Open(context.Background(), id); err == nil {
		t.Fatal("the open succeeded though the test's store fails it: the test did not set up its case")
	}
}

// wantReads fails the test unless stream id reads want (its bodies, as
// fmt.Sprint prints them).
func (p *process) wantReads(t testing.TB, id uint64, want string) {
	t.Helper()
	if got := readAll(t, p, id); fmt.Sprint(got) != want {
		t.Fatalf("stream %d reads %v, want %s", id, got, want)
	}
}

func (p *process) create(t testing.TB, name string) uint64 {
	t.Helper()
	r, err := p.plane.ProposeOne(context.Background(), &domain.CreateStream{By: p.by, Name: name, Open: true})
	if err != nil || r.Code != domain.ResultOK {
		t.Fatalf("create: %v %v", r, err)
	}
	if _, err := p.engine.Open(context.Background(), r.Value); err != nil {
		t.Fatal(err)
	}
	return r.Value
}

func records(bodies ...string) []domain.Record {
	out := make([]domain.Record, len(bodies))
	for i, b := range bodies {
		out[i] = domain.Record{Body: []byte(b), Headers: []domain.Header{{Key: "k", Value: b}}}
	}
	return out
}

func bodies(recs []domain.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Body)
	}
	return out
}

func TestAppendReadAndTimestamps(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	r1, err := p.engine.byID(id).appendRecords(ctx, records("a", "b"), nil)
	if err != nil || r1.First != 0 || r1.Next != 2 {
		t.Fatalf("append: %+v %v", r1, err)
	}
	r2, err := p.engine.byID(id).appendRecords(ctx, records("c"), nil)
	if err != nil || r2.First != 2 || r2.TimestampMs < r1.TimestampMs {
		t.Fatalf("append: %+v %v", r2, err)
	}
	r, err := p.engine.byID(id).Read(context.Background(), 1, 10)
	recs, confirmed := r.Records, r.Confirmed
	if err != nil || confirmed != 3 || fmt.Sprint(bodies(recs)) != "[b c]" || recs[0].Headers[0].Value != "b" {
		t.Fatalf("read: %v %d %v", bodies(recs), confirmed, err)
	}
}

// slowStore delays every PutIfAbsent and can hold puts until released.
type slowStore struct {
	ports.ObjectStore
	delay time.Duration
	hold  chan struct{} // when non-nil, puts wait for it to close
}

func (s *slowStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if s.hold != nil {
		<-s.hold
	}
	time.Sleep(s.delay)
	return s.ObjectStore.PutIfAbsent(ctx, key, body)
}

// appendHeld appends "x" to a new stream, in the background, while the
// store holds every PUT until hold is closed; done gets the append's
// answer. It returns once the append is waiting for its bulk.
func appendHeld(t *testing.T, ctx context.Context) (p *process, id uint64, hold chan struct{}, done chan error) {
	store := &slowStore{ObjectStore: memstore.New()}
	p = startProcess(t, memlog.New(), store, 1, 1)
	id = p.create(t, "/s")
	hold, done = make(chan struct{}), make(chan error, 1)
	store.hold = hold
	go func() {
		_, err := p.engine.byID(id).appendRecords(ctx, records("x"), nil)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	return p, id, hold, done
}

// TestReadersNeverSeeUndurableRecords holds the WAL upload and checks that
// the appended record stays invisible until it is stored.
func TestReadersNeverSeeUndurableRecords(t *testing.T) {
	p, id, hold, done := appendHeld(t, context.Background())
	r, _ := p.engine.byID(id).Read(context.Background(), 0, 10)
	recs, confirmed, changed := r.Records, r.Confirmed, r.Changed
	if len(recs) != 0 || confirmed != 0 {
		t.Fatalf("read %d records (confirm %d) before the upload finished", len(recs), confirmed)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(time.Second):
		t.Fatal("waiting reader was not woken")
	}
	if r, _ := p.engine.byID(id).Read(context.Background(), 0, 10); len(r.Records) != 1 {
		t.Fatalf("read %d records after the upload", len(recs))
	}
}

// TestAppendAnswersItsOutcomeAfterTheCallerGivesUp: a caller's context
// that ends while the bulk is uploading does not turn a durable append into
// "outcome unknown": the answer waits for the WAL, which always gives one.
func TestAppendAnswersItsOutcomeAfterTheCallerGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, id, hold, done := appendHeld(t, ctx)
	cancel()
	select {
	case err := <-done:
		t.Fatalf("append answered %v before its bulk was stored", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatalf("durable append answered %v", err)
	}
	p.wantReads(t, id, "[x]")
}

// TestRestartRecoversAndFencesPredecessor: a new process of the same node
// recovers what the old one acknowledged, and the old one can acknowledge
// nothing more.
func TestRestartRecoversAndFencesPredecessor(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	ctx := context.Background()
	for i := range 10 {
		if _, err := old.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	next := startProcess(t, log, store, 1, 2)
	if err := next.plane.WaitFor(ctx, old.plane.Applied()); err != nil {
		t.Fatal(err)
	}
	next.mustOpen(t, id)
	page, _ := next.engine.byID(id).Read(context.Background(), 0, 100)
	recs, confirmed := page.Records, page.Confirmed
	if confirmed != 10 || fmt.Sprint(bodies(recs)) != "[0 1 2 3 4 5 6 7 8 9]" {
		t.Fatalf("recovered %v (confirm %d)", bodies(recs), confirmed)
	}
	if _, err := old.engine.byID(id).appendRecords(ctx, records("late"), nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("old process append after takeover: %v, want ErrFenced", err)
	}
	r, err := next.engine.byID(id).appendRecords(ctx, records("10"), nil)
	if err != nil || r.First != 10 {
		t.Fatalf("new process append: %+v %v", r, err)
	}
	// A third process recovers from the second alone (recovered records were rewritten).
	third := takeOver(t, log, store, 1, 3, next)
	third.mustOpen(t, id)
	if page, _ := third.engine.byID(id).Read(context.Background(), 0, 100); page.Confirmed != 11 || string(page.Records[10].Body) != "10" {
		t.Fatalf("third process sees %v", bodies(page.Records))
	}
}

// TestBareCloses: a producer's close without records is one of its
// requests like any other: the answer names its sequence, and a retry of it
// is a duplicate, not a gap. A conditional close of a closed stream is
// idempotent only if its condition holds.
func TestBareCloses(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	stamp := func(seq uint64) *domain.ProducerStamp { return &domain.ProducerStamp{ID: "p", Epoch: 0, Seq: seq} }
	for seq := range uint64(2) {
		if _, err := p.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(seq)), stamp(seq)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Producer: stamp(2), Close: true})
	if err != nil || res.ProducerSeq != 2 || res.Duplicate {
		t.Fatalf("bare close: %+v %v, want sequence 2 accepted", res, err)
	}
	res, err = p.engine.byID(id).Append(ctx, ports.AppendRequest{Producer: stamp(2), Close: true})
	if err != nil || !res.Duplicate || res.ProducerSeq != 2 || res.Next != 2 {
		t.Fatalf("the close again: %+v %v, want a duplicate of sequence 2 at 2", res, err)
	}
	// The next sequence follows the close's: the stream is closed, not a gap.
	if _, err := p.engine.byID(id).appendRecords(ctx, records("x"), stamp(3)); !errors.Is(err, ports.ErrStreamClosed) {
		t.Fatalf("append after the close: %v, want ports.ErrStreamClosed", err)
	}
	// Closing again is idempotent only if its condition holds.
	tail, other := uint64(2), uint64(7)
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Close: true, MatchNext: &tail}); err != nil {
		t.Fatalf("close again at the tail: %v", err)
	}
	if _, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Close: true, MatchNext: &other}); !errors.Is(err, ports.ErrStreamClosed) {
		t.Fatalf("close again expecting another tail: %v, want ports.ErrStreamClosed", err)
	}
}

// TestDuplicatesNameTheClose: on a sealed stream, a duplicate says whether
// it repeats the request that sealed it. The seal's record names that
// request, so a process that opens the stream later still knows; a seal
// recorded without it (SealStream, as older versions did) leaves it
// unknown, and every duplicate then says no.
func TestDuplicatesNameTheClose(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	p := startProcess(t, log, store, 1, 1)
	ctx := context.Background()
	stamp := func(seq uint64) *domain.ProducerStamp { return &domain.ProducerStamp{ID: "p", Seq: seq} }
	repeat := func(p *process, id uint64, s *domain.ProducerStamp, seal bool) ports.AppendResult {
		t.Helper()
		res, err := p.engine.byID(id).Append(ctx, ports.AppendRequest{Records: records("x"), Producer: s, Close: seal})
		if err != nil || !res.Duplicate {
			t.Fatalf("repeat of %+v: %+v %v, want a duplicate", *s, res, err)
		}
		return res
	}
	byProducer, byOther, unnamed := p.create(t, "/by-producer"), p.create(t, "/by-other"), p.create(t, "/unnamed")
	for _, id := range []uint64{byProducer, byOther, unnamed} {
		if _, err := p.engine.byID(id).appendRecords(ctx, records("a"), stamp(0)); err != nil {
			t.Fatal(err)
		}
		if res := repeat(p, id, stamp(0), false); notTheClose(res) {
			t.Fatalf("a duplicate on an open stream: %+v", res)
		}
	}
	if _, err := p.engine.byID(byProducer).Append(ctx, ports.AppendRequest{Records: records("b"), Producer: stamp(1), Close: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.engine.byID(byOther).Append(ctx, ports.AppendRequest{Close: true}); err != nil {
		t.Fatal(err)
	}
	// A seal as an older version recorded it, naming no request.
	if r, err := p.plane.ProposeOne(ctx, &domain.SealStream{By: p.by, Stream: unnamed, Epoch: 1}); err != nil || !r.OK() {
		t.Fatalf("seal: %v %v", r, err)
	}
	check := func(p *process, when string) {
		t.Helper()
		if res := repeat(p, byProducer, stamp(1), true); notTheClose(res) {
			t.Fatalf("%s: the close repeated: %+v, want it named the close", when, res)
		}
		for _, id := range []uint64{byProducer, byOther} {
			if res := repeat(p, id, stamp(0), false); !notTheClose(res) {
				t.Fatalf("%s: stream %d: an earlier request repeated: %+v, want it not the close", when, id, res)
			}
		}
	}
	check(p, "live")
	next := takeOver(t, log, store, 1, 2, p)
	for _, id := range []uint64{byProducer, byOther, unnamed} {
		next.mustOpen(t, id)
	}
	check(next, "after a restart")
	if res := repeat(next, unnamed, stamp(0), false); notTheClose(res) {
		t.Fatalf("a seal that names no request: %+v, want the close unknown", res)
	}
}

func TestIdempotentProducer(t *testing.T) {
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	id := p.create(t, "/s")
	ctx := context.Background()
	stamp := func(epoch, seq uint64) *domain.ProducerStamp {
		return &domain.ProducerStamp{ID: "p", Epoch: epoch, Seq: seq}
	}
	if r, err := p.engine.byID(id).appendRecords(ctx, records("a"), stamp(1, 0)); err != nil || r.Duplicate {
		t.Fatalf("first: %+v %v", r, err)
	}
	if r, err := p.engine.byID(id).appendRecords(ctx, records("a"), stamp(1, 0)); err != nil || !r.Duplicate || r.First != 0 {
		t.Fatalf("repeat: %+v %v", r, err)
	}
	if _, err := p.engine.byID(id).appendRecords(ctx, records("c"), stamp(1, 2)); !errors.Is(err, ports.ErrProducerGap) {
		t.Fatalf("gap: %v", err)
	}
	if _, err := p.engine.byID(id).appendRecords(ctx, records("b"), stamp(2, 0)); err != nil {
		t.Fatalf("new epoch: %v", err)
	}
	if _, err := p.engine.byID(id).appendRecords(ctx, records("z"), stamp(1, 1)); !errors.Is(err, ports.ErrProducerFenced) {
		t.Fatalf("stale epoch: %v", err)
	}
	if r, _ := p.engine.byID(id).Read(context.Background(), 0, 10); fmt.Sprint(bodies(r.Records)) != "[a b]" {
		t.Fatalf("stream holds %v", bodies(r.Records))
	}
}

// TestProducerStateSurvivesRecovery: dedup state is rebuilt from the WAL,
// so a retry after a crash is recognised.
func TestProducerStateSurvivesRecovery(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	old.appendFirst(t, id, "a")
	next := takeOver(t, log, store, 1, 2, old)
	next.mustOpen(t, id)
	next.retryFirst(t, id, "retry after recovery", "a")
}

// listCounter counts List calls, the first step of every fencing.
type listCounter struct {
	ports.ObjectStore
	lists atomic.Int64
}

func (s *listCounter) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	s.lists.Add(1)
	return s.ObjectStore.List(ctx, prefix, after, limit)
}

// TestTakeoverReadsTheWALStoreOnce: with the WAL on its own store, a new
// process recovers every stream of its predecessor from that store, and
// fences and reads the predecessor's WAL once for all of them.
func TestTakeoverReadsTheWALStoreOnce(t *testing.T) {
	log, data := memlog.New(), memstore.New()
	walStore := &listCounter{ObjectStore: memstore.New()}
	start := func(epoch uint64) *process {
		p := startProcess(t, log, data, 1, epoch)
		p.wal = wal.Open(wal.Config{Store: walStore, Node: 1, Epoch: epoch, RetryFor: time.Second})
		p.engine = New(Config{Plane: p.plane, By: p.by, Store: data, WAL: p.wal})
		return p
	}
	old := start(1)
	ctx := context.Background()
	ids := []uint64{old.create(t, "/a"), old.create(t, "/b"), old.create(t, "/c")}
	for _, id := range ids {
		if _, err := old.engine.byID(id).appendRecords(ctx, records("x", "y"), nil); err != nil {
			t.Fatal(err)
		}
	}
	next := start(2)
	next.plane.WaitFor(ctx, old.plane.Applied())
	var afterFirst int64
	for i, id := range ids {
		if _, err := next.engine.Open(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r, _ := next.engine.byID(id).Read(ctx, 0, 10); fmt.Sprint(bodies(r.Records)) != "[x y]" {
			t.Fatalf("stream %d recovered %v", id, bodies(r.Records))
		}
		if i == 0 {
			afterFirst = walStore.lists.Load()
		}
	}
	if got := walStore.lists.Load(); got != afterFirst {
		t.Fatalf("the predecessor's WAL was listed again for later streams (%d lists, %d after the first)", got, afterFirst)
	}
	if len(next.engine.fenced) != 0 {
		t.Fatalf("%d fenced WALs still held after every stream was recovered", len(next.engine.fenced))
	}
}

// TestConcurrentOpensRecoverEveryStreamOnce opens many streams of a
// vanished predecessor at once, each from several callers: every stream is
// recovered exactly once, and the predecessor's WAL is listed once.
func TestConcurrentOpensRecoverEveryStreamOnce(t *testing.T) {
	log, data := memlog.New(), memstore.New()
	walStore := &listCounter{ObjectStore: memstore.New()}
	start := func(epoch uint64) *process {
		p := startProcess(t, log, data, 1, epoch)
		p.wal = wal.Open(wal.Config{Store: walStore, Node: 1, Epoch: epoch, RetryFor: time.Second})
		p.engine = New(Config{Plane: p.plane, By: p.by, Store: data, WAL: p.wal})
		return p
	}
	old := start(1)
	ctx := context.Background()
	var ids []uint64
	for i := range 12 {
		id := old.create(t, fmt.Sprintf("/s/%d", i))
		if _, err := old.engine.byID(id).appendRecords(ctx, records(fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	next := start(2)
	next.plane.WaitFor(ctx, old.plane.Applied())
	lists := walStore.lists.Load()
	errs := make(chan error, 3*len(ids))
	for _, id := range ids {
		for range 3 {
			go func() { _, err := next.engine.Open(ctx, id); errs <- err }()
		}
	}
	for range 3 * len(ids) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	v := next.plane.View()
	for i, id := range ids {
		if st, _ := v.Stream(id); st.Epoch != 2 {
			t.Fatalf("stream %d at epoch %d: opened more than once", id, st.Epoch)
		}
		if r, _ := next.engine.byID(id).Read(ctx, 0, 10); fmt.Sprint(bodies(r.Records)) != fmt.Sprintf("[%d]", i) {
			t.Fatalf("stream %d recovered %v", id, bodies(r.Records))
		}
	}
	if got := walStore.lists.Load() - lists; got > 2 {
		t.Fatalf("the predecessor's WAL was listed %d times for one takeover", got)
	}
}

// TestCloseAllHandsStreamsBack closes every open stream at shutdown: they
// are closed in the metadata with every record committed, and another
// process opens them without touching the WAL.
func TestCloseAllHandsStreamsBack(t *testing.T) {
	log, data := memlog.New(), memstore.New()
	old := startProcess(t, log, data, 1, 1)
	ctx := context.Background()
	var ids []uint64
	for i := range 5 {
		id := old.create(t, fmt.Sprintf("/h/%d", i))
		if _, err := old.engine.byID(id).appendRecords(ctx, records("a", fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := old.engine.CloseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(old.engine.Local()); n != 0 {
		t.Fatalf("%d streams still open after CloseAll", n)
	}
	v := old.plane.View()
	for _, id := range ids {
		if st, _ := v.Stream(id); v.IsOpen(st) || st.End != 2 {
			t.Fatalf("stream %d: open=%v end=%d after the handoff", id, v.IsOpen(st), st.End)
		}
	}
	next := startProcess(t, log, data, 2, 1)
	walStore := &listCounter{ObjectStore: data} // fencing a predecessor lists its WAL
	next.wal = wal.Open(wal.Config{Store: walStore, Node: 2, Epoch: 1, RetryFor: time.Second})
	next.engine = New(Config{Plane: next.plane, By: next.by, Store: data, WAL: next.wal})
	next.plane.WaitFor(ctx, old.plane.Applied())
	for i, id := range ids {
		if _, err := next.engine.Open(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r, _ := next.engine.byID(id).Read(ctx, 0, 10); fmt.Sprint(bodies(r.Records)) != fmt.Sprintf("[a %d]", i) {
			t.Fatalf("stream %d after handoff: %v", id, bodies(r.Records))
		}
	}
	if n := walStore.lists.Load(); n != 0 {
		t.Fatalf("opening cleanly closed streams listed a WAL %d times: it fenced a predecessor", n)
	}
}

// TestProducerStateSurvivesTwoTakeovers: a producer's append recovered by a
// second process, which dies before any upload of its own, is still known
// to a third: the recovered records were committed with their producer
// state when the second process took over.
func TestProducerStateSurvivesTwoTakeovers(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	first := startProcess(t, log, store, 1, 1)
	id := first.create(t, "/s")
	first.appendFirst(t, id, "a")
	second := takeOver(t, log, store, 1, 2, first)
	second.mustOpen(t, id)
	third := takeOver(t, log, store, 1, 3, second)
	third.mustOpen(t, id)
	if r := third.retryFirst(t, id, "retry after two takeovers", "a"); r.First != 0 {
		t.Fatalf("retry after two takeovers: %+v, want a duplicate of offset 0", r)
	}
}

// TestProducerStateSurvivesATrimToEmpty: a trim of every record keeps the
// last data object, whose section holds the producer state, so a retry
// after a takeover is still recognised.
func TestProducerStateSurvivesATrimToEmpty(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	old.appendFirst(t, id, "a", "b")
	if start, err := old.engine.byID(id).Trim(context.Background(), 2); err != nil || start != 2 {
		t.Fatalf("trim to the end: start %d, %v", start, err)
	}
	next := takeOver(t, log, store, 1, 2, old)
	next.mustOpen(t, id)
	next.retryFirst(t, id, "retry after a trim to empty and a takeover", "a", "b")
}

// TestTrimmedToEmptyOpensWithoutTheLastObjectsBytes: a stream trimmed to
// empty whose kept last object has no bytes (collected by a node that ran
// before trims kept it) still opens, with no state to restore.
func TestTrimmedToEmptyOpensWithoutTheLastObjectsBytes(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/s")
	ctx := context.Background()
	old.appendFirst(t, id, "a")
	if _, err := old.engine.byID(id).Trim(ctx, 1); err != nil {
		t.Fatal(err)
	}
	v := old.plane.View()
	st, _ := v.Stream(id)
	obj, ok := v.LastObject(st)
	if !ok {
		t.Fatal("the trim kept no last object")
	}
	if err := store.Delete(ctx, domain.DataKey(obj.ID)); err != nil {
		t.Fatal(err)
	}
	next := takeOver(t, log, store, 1, 2, old)
	if _, err := next.engine.Open(ctx, id); err != nil {
		t.Fatalf("open of a stream trimmed to empty whose last object is gone: %v", err)
	}
	if _, err := next.engine.byID(id).appendRecords(ctx, records("b"), nil); err != nil {
		t.Fatal(err)
	}
}

// TestTrimToEmptyKeepsNoObjectWithoutState: a stream with no producer state
// or writer sequence keeps no object once every record is trimmed.
func TestTrimToEmptyKeepsNoObjectWithoutState(t *testing.T) {
	p := startProcessTB(t, memstore.New())
	id := p.create(t, "/s")
	ctx := context.Background()
	if _, err := p.engine.byID(id).appendRecords(ctx, records("a", "b"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.engine.byID(id).Trim(ctx, 2); err != nil {
		t.Fatal(err)
	}
	v := p.plane.View()
	st, _ := v.Stream(id)
	if obj, ok := v.LastObject(st); ok {
		t.Fatalf("a stream without state kept object %d after a trim of every record", obj.ID)
	}
}

// notTheClose reports whether a duplicate on a closed stream repeats a
// request other than the one that closed it.
func notTheClose(res ports.AppendResult) bool { return res.Closed && !res.RepeatsClose }
