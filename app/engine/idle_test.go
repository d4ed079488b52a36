package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// startReleasing is a process whose streams are released after a minute
// unused, on a clock the test moves. Streams created before it returns
// are queued at the clock's start.
func startReleasing(t *testing.T) (*process, *testClock, ports.MetaLog) {
	t.Helper()
	log := memlog.New()
	p := startProcess(t, log, memstore.New(), 1, 1)
	clock := &testClock{now: time.UnixMilli(1_700_000_000_000)}
	p.engine.cfg.Now, p.engine.cfg.ReleaseIdleAfter = clock.Now, time.Minute
	return p, clock, log
}

func (p *process) wantLocal(t *testing.T, id uint64, want bool) {
	t.Helper()
	if _, local := p.engine.Held(id); local != want {
		t.Fatalf("stream %d local: %v, want %v", id, local, want)
	}
	v := p.plane.View()
	if st, ok := v.Stream(id); !ok || !v.IsOpen(st) || !p.engine.writes(st) {
		t.Fatalf("stream %d is no longer open by this process in the metadata: %+v", id, st)
	}
}

// createInMeta creates stream name, open by p in the metadata only.
func (p *process) createInMeta(t *testing.T, name string, meta []byte) uint64 {
	t.Helper()
	r, err := p.plane.ProposeOne(context.Background(), &domain.CreateStream{By: p.by, Name: name, Open: true, Meta: meta})
	if err != nil || !r.OK() {
		t.Fatal(r, err)
	}
	return r.Value
}

// releaseAfter moves the clock by d and releases what is idle, failing
// the test unless want streams left memory.
func (p *process) releaseAfter(t *testing.T, clock *testClock, d time.Duration, want int) {
	t.Helper()
	clock.advance(d)
	if n := p.engine.releaseIdle(); n != want {
		t.Fatalf("released %d streams after %v, want %d", n, d, want)
	}
}

func (p *process) upload(t *testing.T) {
	t.Helper()
	if _, err := p.engine.Upload(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.engine.compactAll(context.Background())
}

// TestIdleStreamIsReleasedAndReopens: a stream unused for the release
// period leaves memory, stays open here in the metadata, and its next open
// restores what its last data object holds: a producer's retry is still a
// duplicate, and new appends continue its offsets.
func TestIdleStreamIsReleasedAndReopens(t *testing.T) {
	p, clock, _ := startReleasing(t)
	id := p.create(t, "/idle/released")
	p.appendFirst(t, id, "a", "b")
	p.upload(t)

	p.releaseAfter(t, clock, 59*time.Second, 0)
	p.wantLocal(t, id, true)
	p.releaseAfter(t, clock, 2*time.Second, 1)
	p.wantLocal(t, id, false)

	p.mustOpen(t, id)
	p.retryFirst(t, id, "a retry after the release")
	if _, err := p.engine.byID(id).appendRecords(context.Background(), records("c"), nil); err != nil {
		t.Fatal(err)
	}
	p.wantReads(t, id, "[a b c]")
}

// TestIdleReleaseKeepsWhatItCannotRebuild: a stream used in the period, one
// with records not yet in data objects, and one with time rules stay in
// memory; the first two are released once the reason is gone.
func TestIdleReleaseKeepsWhatItCannotRebuild(t *testing.T) {
	p, clock, _ := startReleasing(t)
	used := p.create(t, "/idle/used")
	uncommitted := p.create(t, "/idle/uncommitted")
	timed := p.createInMeta(t, "/idle/timed", domain.EncodeStreamConfig(domain.StreamConfig{TTLSec: 3600}))
	p.mustOpen(t, timed)
	p.appendFirst(t, uncommitted, "x")

	clock.advance(30 * time.Second)
	p.mustOpen(t, used)
	p.releaseAfter(t, clock, 31*time.Second, 0)
	for _, id := range []uint64{used, uncommitted, timed} {
		p.wantLocal(t, id, true)
	}

	p.upload(t)
	p.releaseAfter(t, clock, 61*time.Second, 2)
	p.wantLocal(t, used, false)
	p.wantLocal(t, uncommitted, false)
	p.wantLocal(t, timed, true)
}

// TestReleaseWakesWaitingReaders: a reader waiting at the tail is woken by
// the release and finds the stream let go, so it opens it again rather
// than wait on a stream nothing will change.
func TestReleaseWakesWaitingReaders(t *testing.T) {
	p, clock, _ := startReleasing(t)
	id := p.create(t, "/idle/waited")
	h, err := p.engine.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	page, err := h.Read(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	p.upload(t)
	h.s.used.Store(false) // the read above counted as a use
	p.releaseAfter(t, clock, 2*time.Minute, 1)
	select {
	case <-page.Changed:
	default:
		t.Fatal("the waiting reader was not woken by the release")
	}
	if _, err := h.Read(context.Background(), 0, 10); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("a read on the released handle: %v, want ErrNotLocal", err)
	}
	if page, err := h.Read(context.Background(), 0, 10); err == nil {
		t.Fatalf("read %+v from a released stream", page)
	}
	s := h.s
	s.mu.Lock()
	changed := s.changedLocked()
	s.mu.Unlock()
	select {
	case <-changed:
	default:
		t.Fatal("a released stream hands out a wait that never ends")
	}
}

// TestHandoffClosesStreamsNotInMemory: CloseAll closes, from the metadata,
// the streams this process writes that are not in memory (released, or
// opened at create and never used here), and from then on reopens none
// of them, so no append can land in a stream its close hands back.
func TestHandoffClosesStreamsNotInMemory(t *testing.T) {
	p, clock, log := startReleasing(t)
	released := p.create(t, "/idle/handoff-released")
	p.appendFirst(t, released, "r")
	p.upload(t)
	created := p.createInMeta(t, "/idle/handoff-created", nil)
	inMemory := p.create(t, "/idle/handoff-in-memory")
	p.mustOpen(t, inMemory) // a use: kept in memory
	p.releaseAfter(t, clock, 2*time.Minute, 1)

	if err := p.engine.CloseAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := p.plane.View()
	for _, id := range []uint64{released, created, inMemory} {
		if st, _ := v.Stream(id); st == nil || st.Open {
			t.Fatalf("stream %d is still open after the handoff: %+v", id, st)
		}
	}
	// Another process opens the released stream without this one's WAL.
	q := takeOver(t, log, p.engine.cfg.Store, 2, 1, p)
	q.mustOpen(t, released)
	if st := q.stream(t, released); len(st.Unrecovered) != 0 {
		t.Fatalf("the next writer lists %v as unrecovered after a clean handoff", st.Unrecovered)
	}
	q.wantReads(t, released, "[r]")
}

// TestNoReopenDuringHandoff: once CloseAll started, a stream this process
// writes and no longer holds in memory is not reopened here.
func TestNoReopenDuringHandoff(t *testing.T) {
	p, _, _ := startReleasing(t)
	late := p.createInMeta(t, "/idle/late", nil)
	p.engine.handoff.Lock()
	p.engine.handingOff = true
	p.engine.handoff.Unlock()
	if _, err := p.engine.Open(context.Background(), late); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("open during the handoff: %v, want ErrNotLocal", err)
	}
	if _, err := p.engine.byID(late).Append(context.Background(), ports.AppendRequest{Records: records("late")}); err == nil {
		t.Fatal("an append reached a stream during its handoff")
	}
}

// TestHandoffLeavesWhatItHasNoTimeFor: streams not in memory that the
// handoff has no time left to close stay open in the metadata, and their
// next writer, after this process is gone, loses nothing of them.
func TestHandoffLeavesWhatItHasNoTimeFor(t *testing.T) {
	p, clock, log := startReleasing(t)
	id := p.create(t, "/idle/left-open")
	p.appendFirst(t, id, "kept")
	p.upload(t)
	p.releaseAfter(t, clock, 2*time.Minute, 1)
	budget := releasedCloseBudget
	releasedCloseBudget = -time.Second
	defer func() { releasedCloseBudget = budget }()
	if err := p.engine.CloseAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := p.stream(t, id); !st.Open {
		t.Fatal("the handoff closed a stream it had no time for: the test did not set up its case")
	}
	q := takeOver(t, log, p.engine.cfg.Store, 1, 2, p)
	q.mustOpen(t, id)
	q.wantReads(t, id, "[kept]")
	q.retryFirst(t, id, "a retry after the restart")
}

// TestMaintenanceReportsQuietRounds: the maintenance loop tells Released
// about rounds that released nothing too, so that what a wave of
// releases left can be returned once the rounds go quiet.
func TestMaintenanceReportsQuietRounds(t *testing.T) {
	p, _, _ := startReleasing(t)
	quiet := make(chan struct{}, 1)
	p.engine.cfg.Released = func(n int) {
		if n == 0 {
			select {
			case quiet <- struct{}{}:
			default:
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.engine.RunMaintenance(ctx, noLease{}, time.Hour, 5*time.Millisecond)
	select {
	case <-quiet:
	case <-time.After(5 * time.Second):
		t.Fatal("no quiet round was reported")
	}
}
