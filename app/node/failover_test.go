package node

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// registered returns a state with the given node processes registered.
func registered(t *testing.T, procs ...domain.Proposer) domain.State {
	t.Helper()
	v := domain.NewState()
	for _, p := range procs {
		if r := v.Apply(&domain.RegisterNode{Node: p.Node, Epoch: p.Epoch, Address: "x", Slots: 1}); !r.OK() {
			t.Fatalf("register %v: %v", p, r)
		}
	}
	return v
}

func silentIDs(w beatWatch, v *domain.State) []domain.NodeID {
	var ids []domain.NodeID
	for _, n := range w.silent(v, 1, 10*time.Second) {
		ids = append(ids, n.ID)
	}
	return ids
}

// A registration is silent once it and its record at its epoch have looked
// the same for the window, counted on the watcher's clock from the end of
// one good reading to the start of the next, whatever clock the node beats
// by; gaps longer than two beats, and gaps across a bad round, do not
// count.
func TestBeatWatchCountsOnlyGoodObservationTime(t *testing.T) {
	v := registered(t, domain.Proposer{Node: 1, Epoch: 10}, domain.Proposer{Node: 2, Epoch: 20},
		domain.Proposer{Node: 3, Epoch: 30}, domain.Proposer{Node: 4, Epoch: 40})
	t0 := time.Unix(1_700_000_000, 0)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	skewed := t0.Add(-time.Hour) // node 2's clock is an hour behind
	node2 := skewed
	var w beatWatch
	read := func(at float64) {
		beats := []ports.Heartbeat{
			{Node: 1, Epoch: 10, At: sec(at)}, // the watcher itself: never judged
			{Node: 2, Epoch: 20, At: node2},
			{Node: 3, Epoch: 29, At: t0}, // a superseded process still beats; node 3 never beat at 30
			{Node: 5, Epoch: 50, At: t0}, // not registered
		} // node 4 never beat at all (an older version): never judged
		w = w.observe(&v, beats, sec(at), sec(at+0.1), 5*time.Second)
	}
	want := func(what string, ids ...domain.NodeID) {
		t.Helper()
		if got := silentIDs(w, &v); !slices.Equal(got, ids) {
			t.Fatalf("%s: silent %v, want %v", what, got, ids)
		}
	}
	for _, at := range []float64{0, 2.5} {
		read(at)
	}
	node2 = skewed.Add(5 * time.Second) // node 2 beats
	for _, at := range []float64{5, 7.5, 10} {
		read(at)
	}
	want("after 9.6s of good gaps") // 4 gaps of 2.4s
	read(12.5)
	want("after 12s of good gaps", 3)
	read(15)
	want("9.6s after node 2's beat was seen", 3) // 4 gaps of 2.4s since the reading that showed it
	read(30)                                     // the watcher stalled: a gap of 14.9s does not count
	want("after a long gap", 3)
	w = w.interrupted()
	read(32.5) // a good reading after a bad round: its gap does not count, none is forgotten
	want("after a bad round", 3)
	read(35)
	want("after 12s of good gaps since node 2's beat", 2, 3)

	// Fenced, node 2 is registered at the next epoch with no slots and no
	// process: it is never judged again.
	if r := v.Apply(&domain.FenceNode{By: domain.Proposer{Node: 1, Epoch: 10}, Node: 2, Epoch: 20}); !r.OK() {
		t.Fatal(r)
	}
	for at := 37.5; at < 60; at += 2.5 {
		read(at)
	}
	want("once node 2 is fenced", 3)
	// Node 3 registers again: its quiet starts over, and a registration
	// that changed after the reading is not judged on the old one's quiet.
	if r := v.Apply(&domain.RegisterNode{Node: 3, Epoch: 31, Address: "x", Slots: 1}); !r.OK() {
		t.Fatal(r)
	}
	want("node 3 registered again after the reading")
	read(62.5)
	want("node 3 registered again")
	for at := 65.0; at < 75; at += 2.5 {
		read(at)
	}
	want("9.6s after node 3 registered again")
	read(75)
	want("12s after node 3 registered again", 3)
	// Two bad rounds in a row forget all quiet.
	w = w.interrupted()
	want("after one bad round", 3)
	w = w.interrupted()
	want("after two bad rounds in a row")
	// A watcher that just started judges nobody yet.
	w = beatWatch{}
	read(100)
	want("a fresh watch")
}

// registration is node id's registration in n's view.
func registration(n *Node, id domain.NodeID) domain.Node {
	v := n.View()
	reg, _ := v.Node(id)
	return *reg
}

// switchableBeats stops recording a process's beats on demand, as if it
// died, while the process itself keeps running.
type switchableBeats struct {
	ports.Heartbeats
	off atomic.Bool
}

func (s *switchableBeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if s.off.Load() {
		return nil
	}
	return s.Heartbeats.Beat(ctx, node, epoch, now)
}

// failoverCluster starts nodes on one in-memory log and store that fence
// after a 300 ms silence, beating every 20 ms.
type failoverCluster struct {
	t     *testing.T
	log   *memlog.Log
	store *memstore.Store
}

const testFailoverAfter = 300 * time.Millisecond

func newFailoverCluster(t *testing.T) *failoverCluster {
	return &failoverCluster{t: t, log: memlog.New(), store: memstore.New()}
}

// start starts node id beating through beats every 20 ms; with lease it
// may judge. Uploads to data objects wait an hour, so appends stay in the
// WAL.
func (c *failoverCluster) start(id domain.NodeID, lease ports.Lease, beats ports.Heartbeats) *Node {
	c.t.Helper()
	return c.startBeating(id, lease, beats, 20*time.Millisecond)
}

// startBeating is start with another beat interval (at most a quarter of
// the window).
func (c *failoverCluster) startBeating(id domain.NodeID, lease ports.Lease, beats ports.Heartbeats, every time.Duration) *Node {
	c.t.Helper()
	n, err := Start(context.Background(), Config{ID: id, Address: "x", Slots: 1, Log: c.log, Lease: lease, Store: c.store,
		Heartbeats: beats, FailoverAfter: testFailoverAfter, BeatEvery: every, UploadEvery: time.Hour})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = n.Close() })
	return n
}

func fencedWithin(n *Node, d time.Duration) bool {
	select {
	case <-n.Fenced():
		return true
	case <-time.After(d):
		return false
	}
}

func appendBodies(t *testing.T, n *Node, name string, bodies ...string) {
	t.Helper()
	for _, body := range bodies {
		if _, err := n.Streams().Append(context.Background(), name, ports.AppendRequest{Records: []domain.Record{{Body: []byte(body)}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A node whose heartbeat stops is fenced by the lease holder, with no
// operator: its streams open on the holder with every append it
// acknowledged (here only in its WAL), it learns it was fenced, and it can
// no longer append. Live nodes are left alone.
func TestFailoverFencesASilentNode(t *testing.T) {
	c := newFailoverCluster(t)
	ctx := context.Background()
	judge := c.start(1, c.log.Lease(), c.log.Heartbeats())
	beats := &switchableBeats{Heartbeats: c.log.Heartbeats()}
	doomed := c.start(2, nil, beats) // never the lease holder
	if _, _, err := doomed.Streams().Create(ctx, "/s", domain.StreamConfig{}, nil, false); err != nil {
		t.Fatal(err)
	}
	appendBodies(t, doomed, "/s", "a")
	time.Sleep(4 * testFailoverAfter) // both beating: nobody is fenced
	if reg := registration(judge, 2); reg.Epoch != doomed.Epoch() {
		t.Fatalf("a beating node was fenced: registered at %d, runs at %d", reg.Epoch, doomed.Epoch())
	}
	appendBodies(t, doomed, "/s", "b", "c")
	v := judge.View()
	if st, _ := v.StreamByName("/s"); st.End != 0 {
		t.Fatalf("the appends reached data objects (end %d): the test would not show recovery from the WAL", st.End)
	}

	beats.off.Store(true)
	if !fencedWithin(doomed, 20*testFailoverAfter) {
		t.Fatal("the silent node was not fenced")
	}
	// (The doomed node's view, which showed it the fence; the judge's may
	// publish the row a moment later.)
	if reg := registration(doomed, 2); reg.Epoch != doomed.Epoch()+1 || reg.Slots != 0 {
		t.Fatalf("node 2 registered at epoch %d with %d slots, want %d and 0", reg.Epoch, reg.Slots, doomed.Epoch()+1)
	}
	waitFor(t, "the judge's view to show the fence", func() bool { return registration(judge, 2).Epoch != doomed.Epoch() })
	res, err := judge.Streams().Read(ctx, "/s", 0, ports.ReadLimits{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Records {
		got = append(got, string(r.Body))
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("read on the judge after failover: %q, want a b c", got)
	}
	if _, err := doomed.Streams().Append(ctx, "/s", ports.AppendRequest{Records: []domain.Record{{Body: []byte("late")}}}); err == nil {
		t.Fatal("the fenced node still appends")
	}
	if reg := registration(judge, 1); reg.Epoch != judge.Epoch() || fencedWithin(judge, 0) || judge.Ready() != nil {
		t.Fatalf("the judge fenced itself or is not ready: %v", judge.Ready())
	}
}

// A process that registered and died before its first beat is fenced too,
// if its node id beat before (here: its predecessor's).
func TestFailoverFencesANodeThatNeverBeat(t *testing.T) {
	c := newFailoverCluster(t)
	c.start(1, c.log.Lease(), c.log.Heartbeats())
	predecessor := c.start(2, nil, c.log.Heartbeats())
	waitFor(t, "node 2 to beat", func() bool {
		beats, _ := c.log.Heartbeats().Beats(context.Background())
		return len(beats) == 2
	})
	_ = predecessor.Close()
	beats := &switchableBeats{Heartbeats: c.log.Heartbeats()}
	beats.off.Store(true)
	doomed := c.start(2, nil, beats)
	if !fencedWithin(doomed, 20*testFailoverAfter) {
		t.Fatal("a node that never beat was not fenced")
	}
}

// flakyBeats fails every call while down, and can stall one reading after
// it was taken, as a slow database or a starved reader does.
type flakyBeats struct {
	ports.Heartbeats
	down  atomic.Bool
	stall atomic.Int64 // nanoseconds, for the next reading
}

var errDatabaseDown = errors.New("database unavailable")

func (f *flakyBeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if f.down.Load() {
		return errDatabaseDown
	}
	return f.Heartbeats.Beat(ctx, node, epoch, now)
}

func (f *flakyBeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if f.down.Load() {
		return nil, errDatabaseDown
	}
	b, err := f.Heartbeats.Beats(ctx)
	time.Sleep(time.Duration(f.stall.Swap(0)))
	return b, err
}

// An outage of the database longer than the window fences nobody: the
// judge saw no beats because it could read none, and the node whose first
// beat after the outage lands late is alive.
func TestFailoverSurvivesADatabaseOutage(t *testing.T) {
	c := newFailoverCluster(t)
	judgeDB, liveDB := &flakyBeats{Heartbeats: c.log.Heartbeats()}, &flakyBeats{Heartbeats: c.log.Heartbeats()}
	c.start(1, c.log.Lease(), judgeDB)
	live := c.start(2, nil, liveDB)
	time.Sleep(4 * testFailoverAfter)
	liveDB.down.Store(true)
	time.Sleep(60 * time.Millisecond)
	judgeDB.down.Store(true)
	time.Sleep(2 * testFailoverAfter)
	judgeDB.down.Store(false) // the judge reads again before the live node beats again
	time.Sleep(150 * time.Millisecond)
	liveDB.down.Store(false)
	if fencedWithin(live, 10*testFailoverAfter) {
		t.Fatal("a live node was fenced after a database outage")
	}
}

// A reading that stalls after the database took it shows old records:
// judged as if current, they would make a beating node look silent. The
// live node beats less often than the judge reads, so two readings in a
// row often show the same record.
func TestFailoverIgnoresStalledReadings(t *testing.T) {
	c := newFailoverCluster(t)
	judgeDB := &flakyBeats{Heartbeats: c.log.Heartbeats()}
	c.start(1, c.log.Lease(), judgeDB)
	live := c.startBeating(2, nil, c.log.Heartbeats(), testFailoverAfter/4)
	time.Sleep(4 * testFailoverAfter)
	for range 5 {
		judgeDB.stall.Store(int64(testFailoverAfter + 100*time.Millisecond))
		time.Sleep(testFailoverAfter + 200*time.Millisecond)
	}
	if fencedWithin(live, testFailoverAfter) {
		t.Fatal("a live node was fenced after stalled readings")
	}
}

// A process superseded by a newer one with its node id sees it is fenced
// and lets the maintenance lease go at once, so the lease moves to a live
// process without waiting for it to expire.
func TestFencedProcessReleasesTheLease(t *testing.T) {
	c := newFailoverCluster(t)
	old := c.start(1, c.log.Lease(), c.log.Heartbeats())
	waitFor(t, "the first process to hold the lease", func() bool { _, held := old.LeaseHolder(); return held })
	newer := c.start(1, c.log.Lease(), c.log.Heartbeats())
	if !fencedWithin(old, 20*testFailoverAfter) {
		t.Fatal("the superseded process does not see it is fenced")
	}
	waitFor(t, "the lease to move to the newer process", func() bool { _, held := newer.LeaseHolder(); return held })
	if _, held := old.LeaseHolder(); held {
		t.Fatal("the fenced process still holds the lease")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(8 * time.Second) // the lease keeper tries every 2.5 s
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// blockingBeats holds every call while held, as a query queued behind a
// restarting database does, until released or its context ends.
type blockingBeats struct {
	ports.Heartbeats
	mu      sync.Mutex
	gate    chan struct{} // nil: open
	blocked atomic.Int64  // calls that waited at the gate
}

func (b *blockingBeats) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate = make(chan struct{})
}

func (b *blockingBeats) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.gate)
	b.gate = nil
}

func (b *blockingBeats) wait(ctx context.Context) error {
	b.mu.Lock()
	gate := b.gate
	b.mu.Unlock()
	if gate == nil {
		return nil
	}
	b.blocked.Add(1)
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blockingBeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if err := b.wait(ctx); err != nil {
		return err
	}
	return b.Heartbeats.Beat(ctx, node, epoch, now)
}

func (b *blockingBeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b.Heartbeats.Beats(ctx)
}

// An outage in which the judge's calls hang instead of failing fences
// nobody either: when they go through, the live node's record is still the
// one from before the outage, until its next beat.
func TestFailoverSurvivesAnOutageThatBlocks(t *testing.T) {
	c := newFailoverCluster(t)
	judgeDB, liveDB := &blockingBeats{Heartbeats: c.log.Heartbeats()}, &flakyBeats{Heartbeats: c.log.Heartbeats()}
	c.start(1, c.log.Lease(), judgeDB)
	live := c.start(2, nil, liveDB)
	time.Sleep(4 * testFailoverAfter)
	liveDB.down.Store(true)
	judgeDB.hold()
	time.Sleep(2 * testFailoverAfter)
	judgeDB.release()
	time.Sleep(100 * time.Millisecond) // the live node beats again later
	liveDB.down.Store(false)
	if fencedWithin(live, 10*testFailoverAfter) {
		t.Fatal("a live node was fenced after an outage in which the judge's calls hung")
	}
}

// lostWrites drops writes while down but says they worked, as a database
// that fails over to a stale replica does; readings work and show nobody
// beating.
type lostWrites struct {
	ports.Heartbeats
	down atomic.Bool
}

func (l *lostWrites) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if l.down.Load() {
		return nil
	}
	return l.Heartbeats.Beat(ctx, node, epoch, now)
}

// Readings that do not show the watcher's own beat do not count.
func TestFailoverSurvivesLostWrites(t *testing.T) {
	c := newFailoverCluster(t)
	judgeDB, liveDB := &lostWrites{Heartbeats: c.log.Heartbeats()}, &lostWrites{Heartbeats: c.log.Heartbeats()}
	c.start(1, c.log.Lease(), judgeDB)
	live := c.start(2, nil, liveDB)
	time.Sleep(4 * testFailoverAfter)
	judgeDB.down.Store(true)
	liveDB.down.Store(true)
	time.Sleep(2 * testFailoverAfter)
	judgeDB.down.Store(false)
	time.Sleep(50 * time.Millisecond)
	liveDB.down.Store(false)
	if fencedWithin(live, 10*testFailoverAfter) {
		t.Fatal("a live node was fenced while the database lost writes")
	}
}

// failingReads fails every nth reading.
type failingReads struct {
	ports.Heartbeats
	every int64
	calls atomic.Int64
}

func (f *failingReads) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if f.calls.Add(1)%f.every == 0 {
		return nil, errDatabaseDown
	}
	return f.Heartbeats.Beats(ctx)
}

// Occasional failed readings pause the count without resetting it: a dead
// node is still fenced.
func TestFailoverThroughOccasionalReadErrors(t *testing.T) {
	c := newFailoverCluster(t)
	c.start(1, c.log.Lease(), &failingReads{Heartbeats: c.log.Heartbeats(), every: 5})
	beats := &switchableBeats{Heartbeats: c.log.Heartbeats()}
	doomed := c.start(2, nil, beats)
	time.Sleep(2 * testFailoverAfter)
	beats.off.Store(true)
	if !fencedWithin(doomed, 20*testFailoverAfter) {
		t.Fatal("a dead node was not fenced through occasional read errors")
	}
}

// A process that does not beat at all (an older version) is never judged.
func TestFailoverLeavesNodesThatNeverBeatAlone(t *testing.T) {
	c := newFailoverCluster(t)
	c.start(1, c.log.Lease(), c.log.Heartbeats())
	older := c.start(2, nil, nil)
	if fencedWithin(older, 10*testFailoverAfter) {
		t.Fatal("a live node that does not beat was fenced")
	}
}

// A superseded process whose heartbeat calls hang still sees that it is
// fenced (each call gives up after a beat), and lets the lease go.
func TestFencedWhileHeartbeatCallsHang(t *testing.T) {
	c := newFailoverCluster(t)
	stuck := &blockingBeats{Heartbeats: c.log.Heartbeats()}
	old := c.start(1, c.log.Lease(), stuck)
	waitFor(t, "the first process to hold the lease", func() bool { _, held := old.LeaseHolder(); return held })
	stuck.hold()
	t.Cleanup(stuck.release)
	waitFor(t, "a heartbeat call to hang", func() bool { return stuck.blocked.Load() > 0 })
	newer := c.start(1, c.log.Lease(), c.log.Heartbeats())
	if !fencedWithin(old, 20*testFailoverAfter) {
		t.Fatal("a superseded process whose heartbeat calls hang does not see it is fenced")
	}
	waitFor(t, "the lease to move to the newer process", func() bool { _, held := newer.LeaseHolder(); return held })
}
