package wal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// slowStore delays every PutIfAbsent and can hold puts until released.
type slowStore struct {
	ports.ObjectStore
	delay    time.Duration
	delayFor func(key string) time.Duration // extra delay per key
	hold     chan struct{}                  // when non-nil, puts wait for it to close
	puts     atomic.Int64
	// ambiguous makes the next n puts store and then report an error.
	ambiguous atomic.Int64
}

func (s *slowStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if s.hold != nil {
		<-s.hold
	}
	time.Sleep(s.delay)
	if s.delayFor != nil {
		time.Sleep(s.delayFor(key))
	}
	s.puts.Add(1)
	err := s.ObjectStore.PutIfAbsent(ctx, key, body)
	if err == nil && s.ambiguous.Add(-1) >= 0 {
		return errors.New("connection reset after the store committed")
	}
	return err
}

func frame(stream, off uint64, body string) *domain.Frame {
	return &domain.Frame{Stream: stream, Epoch: 1, Offset: off, Records: []domain.Record{{Body: []byte(body)}}}
}

func submitWait(t testing.TB, w *WAL, f *domain.Frame) error {
	done := make(chan error, 1)
	if err := w.Submit(f, func(err error) { done <- err }); err != nil {
		return err
	}
	return <-done
}

func TestLoneAppendCostsOnePut(t *testing.T) {
	store := &slowStore{ObjectStore: memstore.New()}
	w := Open(Config{Store: store, Node: 1, Epoch: 1})
	for i := range 5 {
		if err := submitWait(t, w, frame(1, uint64(i), "x")); err != nil {
			t.Fatal(err)
		}
		if got := store.puts.Load(); got != int64(i+1) {
			t.Fatalf("after %d lone appends: %d puts", i+1, got)
		}
	}
	// One bulk in flight at a time: one uploader served them all.
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uploaders != 1 {
		t.Fatalf("%d uploaders for bulks one at a time, want 1", w.uploaders)
	}
}

// TestConcurrentAppendsShareBulksInOrder: 64 writers against a store with
// 2 ms PUTs must share bulks, and each writer's frames must be durable in
// its own order.
func TestConcurrentAppendsShareBulksInOrder(t *testing.T) {
	store := &slowStore{ObjectStore: memstore.New(), delay: 2 * time.Millisecond}
	w := Open(Config{Store: store, Node: 1, Epoch: 1})
	const writers, each = 64, 20
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range each {
				if err := submitWait(t, w, frame(uint64(i), uint64(n), fmt.Sprint(n))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stats := w.Stats()
	if perPut := float64(stats.Submissions) / float64(stats.Puts); perPut < 8 {
		t.Fatalf("%d frames in %d puts: %.1f per put, want grouping", stats.Submissions, stats.Puts, perPut)
	}
	frames, err := Fence(context.Background(), store, 1, 1, domain.Proposer{Node: 2, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	next := map[uint64]uint64{}
	for _, f := range frames {
		if f.Offset != next[f.Stream] {
			t.Fatalf("writer %d: frame %d after %d", f.Stream, f.Offset, next[f.Stream])
		}
		next[f.Stream]++
	}
	for i := range uint64(writers) {
		if next[i] != each {
			t.Fatalf("writer %d: %d frames stored, want %d", i, next[i], each)
		}
	}
}

// TestAcksFollowBulkOrder: a later bulk stored first is not acknowledged
// before the earlier one.
func TestAcksFollowBulkOrder(t *testing.T) {
	// Bulk 1 takes longest and bulk 3 is stored first.
	delays := map[uint64]time.Duration{1: 60 * time.Millisecond, 2: 30 * time.Millisecond}
	store := &slowStore{ObjectStore: memstore.New(), delayFor: func(key string) time.Duration {
		seq, _ := domain.ParseWALSeq(domain.WALPrefix(1, 1), key)
		return delays[seq]
	}}
	w := Open(Config{Store: store, Node: 1, Epoch: 1, MaxBulkBytes: 1})
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		if err := w.Submit(frame(1, uint64(i), "x"), func(err error) {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if st := w.Stats(); st.Puts != 3 {
		t.Fatalf("%d puts, want 3 pipelined bulks", st.Puts)
	}
	w.mu.Lock()
	if w.uploaders != 3 {
		t.Errorf("%d uploaders for 3 bulks in flight at once, want 3", w.uploaders)
	}
	w.mu.Unlock()
	for i, got := range order {
		if got != i {
			t.Fatalf("acknowledgement order %v", order)
		}
	}
}

func TestAmbiguousPutIsNotRepeated(t *testing.T) {
	store := &slowStore{ObjectStore: memstore.New()}
	store.ambiguous.Store(2)
	w := Open(Config{Store: store, Node: 1, Epoch: 1})
	for i := range 3 {
		if err := submitWait(t, w, frame(1, uint64(i), "x")); err != nil {
			t.Fatal(err)
		}
	}
	frames, err := Fence(context.Background(), store, 1, 1, domain.Proposer{Node: 2, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 3 {
		t.Fatalf("%d frames stored, want 3", len(frames))
	}
}

// TestFencedWriterAcknowledgesNothingMore: after another process fences the
// WAL, every frame acknowledged before is in what the fencer read, and no
// later frame is acknowledged.
func TestFencedWriterAcknowledgesNothingMore(t *testing.T) {
	store := memstore.New()
	w := Open(Config{Store: store, Node: 1, Epoch: 1, RetryFor: time.Second})
	var acked []uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for off := uint64(0); ; off++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := submitWait(t, w, frame(1, off, "x")); err != nil {
				if !errors.Is(err, ErrFenced) {
					t.Errorf("append %d: %v, want ErrFenced", off, err)
				}
				return
			}
			mu.Lock()
			acked = append(acked, off)
			mu.Unlock()
		}
	}()
	time.Sleep(20 * time.Millisecond)
	frames, err := Fence(context.Background(), store, 1, 1, domain.Proposer{Node: 2, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	seen := map[uint64]bool{}
	for _, f := range frames {
		seen[f.Offset] = true
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged before the fence")
	}
	for _, off := range acked {
		if !seen[off] {
			t.Fatalf("frame %d was acknowledged but the fencer did not see it", off)
		}
	}
	if !errors.Is(w.Err(), ErrFenced) {
		t.Fatalf("WAL error %v, want ErrFenced", w.Err())
	}
}

func TestBackpressureBlocksSubmit(t *testing.T) {
	hold := make(chan struct{})
	store := &slowStore{ObjectStore: memstore.New(), hold: hold}
	w := Open(Config{Store: store, Node: 1, Epoch: 1, MaxBufferedBytes: 100})
	big := &domain.Frame{Stream: 1, Records: []domain.Record{{Body: make([]byte, 80)}}}
	if err := w.Submit(big, func(error) {}); err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{})
	go func() {
		w.Submit(&domain.Frame{Stream: 1, Offset: 1, Records: []domain.Record{{Body: make([]byte, 80)}}}, func(error) {})
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("Submit did not wait with the buffer full")
	case <-time.After(50 * time.Millisecond):
	}
	close(hold)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("Submit still blocked after the store drained")
	}
}

func TestCloseFlushesBufferedFrames(t *testing.T) {
	store := &slowStore{ObjectStore: memstore.New(), delay: 5 * time.Millisecond}
	w := Open(Config{Store: store, Node: 1, Epoch: 1})
	var ok atomic.Int64
	for i := range 50 {
		if err := w.Submit(frame(1, uint64(i), "x"), func(err error) {
			if err == nil {
				ok.Add(1)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ok.Load() != 50 {
		t.Fatalf("%d of 50 frames durable after Close", ok.Load())
	}
	if err := w.Submit(frame(1, 50, "x"), func(error) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
}

// partialDeleteStore deletes only some of the keys of a many-key Delete and
// then fails, as a DeleteObjects request may.
type partialDeleteStore struct {
	ports.ObjectStore
	keep func(key string) bool // keys the failing Delete leaves
}

func (s *partialDeleteStore) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if !s.keep(k) {
			if err := s.ObjectStore.Delete(ctx, k); err != nil {
				return err
			}
		}
	}
	return errors.New("delete failed part way")
}

// A failed Retire may leave holes in the WAL's run of bulks; the fencer
// still finds every uncovered frame and fences after the newest bulk.
func TestFenceStepsOverHolesOfAFailedRetire(t *testing.T) {
	mem := memstore.New()
	store := &partialDeleteStore{ObjectStore: mem, keep: func(key string) bool {
		return key == domain.WALKey(1, 1, 2) || key == domain.WALKey(1, 1, 4)
	}}
	w := Open(Config{Store: store, Node: 1, Epoch: 1, RetryFor: time.Second})
	for off := range uint64(6) { // one bulk each: 1..6
		if err := submitWait(t, w, frame(1, off, "x")); err != nil {
			t.Fatal(err)
		}
	}
	// Frames 0..3 (bulks 1..4) are committed elsewhere.
	err := w.Retire(context.Background(), func(stream, end uint64) bool { return end <= 4 })
	if err == nil {
		t.Fatal("Retire succeeded though its Delete failed")
	}
	infos, _ := mem.List(context.Background(), domain.WALPrefix(1, 1), "", 100)
	if len(infos) != 4 { // bulks 2, 4, 5, 6
		t.Fatalf("%d bulks left, want 4 (holes at 1 and 3): %v", len(infos), infos)
	}
	frames, err := Fence(context.Background(), mem, 1, 1, domain.Proposer{Node: 2, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, f := range frames {
		seen[f.Offset] = true
	}
	if !seen[4] || !seen[5] {
		t.Fatalf("fencer saw offsets %v, want the uncovered 4 and 5", seen)
	}
	if err := submitWait(t, w, frame(1, 6, "late")); !errors.Is(err, ErrFenced) {
		t.Fatalf("append after the fence: %v, want ErrFenced", err)
	}
}

// putBulk stores a one-frame bulk of process (1, 1) at seq, as its WAL would.
func putBulk(t *testing.T, store ports.ObjectStore, seq uint64) {
	t.Helper()
	body := domain.AppendBulkHeader(nil, domain.BulkHeader{Node: 1, Epoch: 1, Seq: seq})
	body = domain.AppendFrame(body, frame(1, seq, "x"))
	if err := store.PutIfAbsent(context.Background(), domain.WALKey(1, 1, seq), body); err != nil {
		t.Fatal(err)
	}
}

// The fencer keeps the frames of every run it reads: acknowledged bulks
// below a bulk still in flight, and bulks between many holes.
func TestFenceKeepsEveryRunBetweenHoles(t *testing.T) {
	store := memstore.New()
	holes := map[uint64]bool{11: true} // in flight: 1..10 were acknowledged, 12 is stored
	for seq := uint64(20); seq < 100; seq += 3 {
		holes[seq] = true // deleted by retires that failed part way
	}
	for seq := uint64(1); seq <= 100; seq++ {
		if !holes[seq] {
			putBulk(t, store, seq)
		}
	}
	frames, err := Fence(context.Background(), store, 1, 1, domain.Proposer{Node: 2, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for _, f := range frames {
		got[f.Offset] = true
	}
	for seq := uint64(1); seq <= 100; seq++ {
		if got[seq] == holes[seq] {
			t.Fatalf("bulk %d (hole %v): read %v", seq, holes[seq], got[seq])
		}
	}
	body, err := store.Get(context.Background(), domain.WALKey(1, 1, 101), 0, -1)
	if err != nil || !domain.IsFence(body) {
		t.Fatalf("no fence after the newest bulk: %v", err)
	}
	// A second fencer settles too, on the first one's fences.
	if _, err := Fence(context.Background(), store, 1, 1, domain.Proposer{Node: 3, Epoch: 1}); err != nil {
		t.Fatalf("fencing again: %v", err)
	}
}

// Before a writer acknowledged anything, its first bulk may still be in
// flight while a later one is stored (pipelined uploads): the fencer must
// take key 1, or that bulk could land and both be acknowledged unread.
func TestFenceCoversAFirstBulkStillInFlight(t *testing.T) {
	store, ctx := memstore.New(), context.Background()
	second := domain.AppendBulkHeader(nil, domain.BulkHeader{Node: 1, Epoch: 1, Seq: 2})
	if err := store.PutIfAbsent(ctx, domain.WALKey(1, 1, 2), second); err != nil {
		t.Fatal(err)
	}
	if _, err := Fence(ctx, store, 1, 1, domain.Proposer{Node: 2, Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	first := domain.AppendBulkHeader(nil, domain.BulkHeader{Node: 1, Epoch: 1, Seq: 1})
	if err := store.PutIfAbsent(ctx, domain.WALKey(1, 1, 1), first); !errors.Is(err, ports.ErrPrecondition) {
		t.Fatalf("the writer's first bulk was stored after the fence: %v", err)
	}
}

// Stats add up the time PUTs took: the mean PUT latency an operator reads.
func TestWALStatsAddUpPutTime(t *testing.T) {
	store := &gatedStore{ObjectStore: memstore.New(), gate: make(chan time.Duration)}
	w := Open(Config{Store: store, Node: 1, Epoch: 1, MaxLinger: -1})
	t.Cleanup(func() {
		close(store.gate)
		closeWithin(t, w)
	})
	for i, took := range []time.Duration{30 * time.Millisecond, 20 * time.Millisecond} {
		done := submitAsync(t, w, frame(1, uint64(i), "x"))
		release(t, store, took)
		mustAck(t, fmt.Sprint("frame ", i), done)
	}
	if st := w.Stats(); st.Puts != 2 || st.PutTime < 50*time.Millisecond {
		t.Fatalf("stats %+v, want 2 PUTs taking at least 50ms in all", st)
	}
}
