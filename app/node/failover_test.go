package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// registration is node id's registration in n's view.
func registration(n *Node, id domain.NodeID) domain.Node {
	v := n.View()
	reg, _ := v.Node(id)
	return *reg
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
// WAL. Options change the rest of its Config.
func (c *failoverCluster) start(id domain.NodeID, lease ports.Lease, beats ports.Heartbeats, options ...func(*Config)) *Node {
	c.t.Helper()
	cfg := Config{ID: id, Address: "x", Slots: 1, Log: c.log, Lease: lease, Store: c.store,
		Heartbeats: beats, FailoverAfter: testFailoverAfter, BeatEvery: 20 * time.Millisecond, UploadEvery: time.Hour}
	for _, o := range options {
		o(&cfg)
	}
	n, err := Start(context.Background(), cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = n.Close() })
	return n
}

// awaitRecords waits until n node ids have heartbeat records.
func (c *failoverCluster) awaitRecords(n int) {
	c.t.Helper()
	waitFor(c.t, "heartbeat records", func() bool {
		recorded, _ := c.log.Heartbeats().Beats(context.Background())
		return len(recorded) == n
	})
}

// heldWithin reports whether n holds the maintenance lease within d. Its
// keeper tries at start, then every 2.5 s.
func heldWithin(n *Node, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, held := n.LeaseHolder(); held {
			return true
		}
	}
	return false
}

// eventually reports whether cond holds within d, checked every 10 ms.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
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
	beats := &droppingBeats{Heartbeats: c.log.Heartbeats()}
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

	beats.down.Store(true)
	if !fencedWithin(doomed, 20*testFailoverAfter) {
		t.Fatal("the silent node was not fenced")
	}
	if cause := doomed.FenceCause(); !strings.Contains(cause, "heartbeat stopped") {
		t.Fatalf("fence cause %q does not name the silence", cause)
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
	if st := judge.Stats(); st.NodesFenced != 1 || st.BeatFailing || st.ReadingsUnusable {
		t.Fatalf("judge stats %+v, want one node fenced and heartbeats working", st)
	}
	if reg := registration(judge, 1); reg.Epoch != judge.Epoch() || fencedWithin(judge, 0) || judge.Ready() != nil {
		t.Fatalf("the judge fenced itself or is not ready: %v", judge.Ready())
	}
}

// Every node judges, not only the lease holder: a holder that dies is
// fenced within the window, long before its lease would expire and pass
// to a survivor.
func TestFailoverFencesTheLeaseHolder(t *testing.T) {
	c := newFailoverCluster(t)
	beats := &droppingBeats{Heartbeats: c.log.Heartbeats()}
	holder := c.start(1, c.log.Lease(), beats)
	waitFor(t, "the first node to hold the lease", func() bool { _, held := holder.LeaseHolder(); return held })
	judge := c.start(2, c.log.Lease(), c.log.Heartbeats())
	c.awaitRecords(2)
	beats.down.Store(true)
	if !fencedWithin(holder, 20*testFailoverAfter) {
		t.Fatal("the silent lease holder was not fenced")
	}
	if n := judge.Stats().NodesFenced; n != 1 {
		t.Fatalf("the other node fenced %d nodes, want 1", n)
	}
}

// A fence in the view ends a process's tenure at once, even one whose
// last beat was confirmed a moment ago: the verdict may rest on a silence
// from before that beat.
func TestAFenceInTheViewEndsTheTenure(t *testing.T) {
	c := newFailoverCluster(t)
	fenced := c.start(1, nil, c.log.Heartbeats(), func(cfg *Config) { cfg.FailoverAfter = time.Hour })
	other := c.start(2, nil, c.log.Heartbeats(), func(cfg *Config) { cfg.FailoverAfter = 0 })
	if err := fenced.Serving(); err != nil {
		t.Fatalf("a beating node is not serving: %v", err)
	}
	r, err := other.Plane().ProposeOne(context.Background(), &domain.FenceNode{By: other.Proposer(), Node: 1, Epoch: fenced.Epoch()})
	if err != nil || !r.OK() {
		t.Fatalf("fence: %v %v", r, err)
	}
	waitFor(t, "the fence in the fenced node's view", func() bool { return registration(fenced, 1).Epoch != fenced.Epoch() })
	if err := fenced.Serving(); !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("a node whose view shows its fence: Serving %v, want ErrUnavailable", err)
	}
}

// A process that registered and died before its first beat is fenced too,
// if its node id beat before (here: its predecessor's).
func TestFailoverFencesANodeThatNeverBeat(t *testing.T) {
	c := newFailoverCluster(t)
	c.start(1, c.log.Lease(), c.log.Heartbeats())
	predecessor := c.start(2, nil, c.log.Heartbeats())
	c.awaitRecords(2)
	_ = predecessor.Close()
	beats := &droppingBeats{Heartbeats: c.log.Heartbeats()}
	beats.down.Store(true)
	doomed := c.start(2, nil, beats)
	if !fencedWithin(doomed, 20*testFailoverAfter) {
		t.Fatal("a node that never beat was not fenced")
	}
}

// An outage of the database longer than the window fences nobody, whether
// calls fail, hang, or lose writes: the judge could not see beats, and the
// live node's first beat after the outage lands after the judge reads again.
func TestFailoverSurvivesOutages(t *testing.T) {
	for _, tc := range []struct {
		name        string
		judge, live func(ports.Heartbeats) faultyBeats
	}{
		{"calls fail", newFlakyBeats, newFlakyBeats},
		{"the judge's calls hang", newBlockingBeats, newFlakyBeats},
		{"writes are lost", newDroppingBeats, newDroppingBeats},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFailoverCluster(t)
			judgeDB, liveDB := tc.judge(c.log.Heartbeats()), tc.live(c.log.Heartbeats())
			judge := c.start(1, c.log.Lease(), judgeDB)
			live := c.start(2, nil, liveDB)
			time.Sleep(4 * testFailoverAfter)
			liveDB.fail(true)
			time.Sleep(60 * time.Millisecond)
			judgeDB.fail(true)
			time.Sleep(2 * testFailoverAfter)
			// A loaded machine may run the judge's round late: its stats
			// must say so within a few more windows.
			if !eventually(4*testFailoverAfter, func() bool { return judge.Stats().ReadingsUnusable }) {
				t.Error("during the outage the judge's stats do not say its readings are unusable")
			}
			judgeDB.fail(false)
			time.Sleep(100 * time.Millisecond)
			liveDB.fail(false)
			if fencedWithin(live, 10*testFailoverAfter) {
				t.Fatal("a live node was fenced after the outage")
			}
		})
	}
}

// A reading that stalls after the database took it shows old records:
// judged as if current, they would make a beating node look silent. The
// live node beats less often than the judge reads, so two readings in a
// row often show the same record. It judges nobody itself: the stalls stop
// the judge's beats for longer than the window, and the live node would
// rightly fence it.
func TestFailoverIgnoresStalledReadings(t *testing.T) {
	c := newFailoverCluster(t)
	judgeDB := &flakyBeats{Heartbeats: c.log.Heartbeats()}
	c.start(1, c.log.Lease(), judgeDB)
	live := c.start(2, nil, c.log.Heartbeats(), func(cfg *Config) { cfg.BeatEvery, cfg.FailoverAfter = testFailoverAfter/4, 0 })

	time.Sleep(4 * testFailoverAfter)
	for range 5 {
		judgeDB.stall.Store(int64(testFailoverAfter + 100*time.Millisecond))
		time.Sleep(testFailoverAfter + 200*time.Millisecond)
	}
	if fencedWithin(live, testFailoverAfter) {
		t.Fatal("a live node was fenced after stalled readings")
	}
}

// unlosableLease renews whatever the lease says: a holder on it learns it
// lost the lease only by other means.
type unlosableLease struct{ ports.Lease }

func (unlosableLease) Renew(context.Context, string, uint64, time.Duration, time.Time) error {
	return nil
}

// A process superseded by a newer one with its node id sees it is fenced
// and stops its lease-gated work at once, without waiting for a renewal to
// fail. The newer process, started once the old one has gone silent (it
// is paused or cut off), takes the lease at once (its predecessor's).
func TestFencedProcessReleasesTheLease(t *testing.T) {
	c := newFailoverCluster(t)
	beats := newDroppingBeats(c.log.Heartbeats())
	old := c.start(1, unlosableLease{c.log.Lease()}, beats)
	waitFor(t, "the first process to hold the lease", func() bool { _, held := old.LeaseHolder(); return held })
	c.awaitRecords(1)
	beats.fail(true)
	newer := c.start(1, c.log.Lease(), c.log.Heartbeats())
	if !heldWithin(newer, time.Second) {
		t.Fatal("the newer process did not take its predecessor's lease at once")
	}
	if !fencedWithin(old, 20*testFailoverAfter) {
		t.Fatal("the superseded process does not see it is fenced")
	}
	waitFor(t, "the fenced process to let the lease go", func() bool { _, held := old.LeaseHolder(); return !held })
	if cause := old.FenceCause(); !strings.Contains(cause, "registered as node 1 at this address") {
		t.Fatalf("fence cause %q does not name the restart", cause)
	}
}

// Two processes started with one node id at different addresses: the
// fenced one says so, naming the other's address, instead of blaming a
// silence. The first one's beats are not recorded, so the second's start
// cannot see it alive (checkIDFree) and registers; had a beat been
// recorded before that start, the start would be refused instead.
func TestFenceCauseNamesASharedNodeID(t *testing.T) {
	c := newFailoverCluster(t)
	unseen := newDroppingBeats(c.log.Heartbeats())
	unseen.fail(true)
	first := c.start(1, nil, unseen)
	c.start(1, nil, c.log.Heartbeats(), func(cfg *Config) { cfg.Address = "elsewhere:4437" })
	if !fencedWithin(first, 20*testFailoverAfter) {
		t.Fatal("the first process was not fenced by the second registration")
	}
	if cause := first.FenceCause(); !strings.Contains(cause, "elsewhere:4437") || !strings.Contains(cause, "share one --node-id") {
		t.Fatalf("fence cause %q does not name the other process and the shared id", cause)
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

// Occasional failed readings pause the count without resetting it: a dead
// node is still fenced.
func TestFailoverThroughOccasionalReadErrors(t *testing.T) {
	for _, tc := range []struct{ every, failing int64 }{{5, 1}, {12, 2}} {
		t.Run(fmt.Sprintf("%d of every %d", tc.failing, tc.every), func(t *testing.T) {
			c := newFailoverCluster(t)
			c.start(1, c.log.Lease(), &failingReads{Heartbeats: c.log.Heartbeats(), every: tc.every, failing: tc.failing})
			beats := &droppingBeats{Heartbeats: c.log.Heartbeats()}
			doomed := c.start(2, nil, beats)
			time.Sleep(2 * testFailoverAfter)
			beats.down.Store(true)
			if !fencedWithin(doomed, 20*testFailoverAfter) {
				t.Fatal("a dead node was not fenced through occasional read errors")
			}
		})
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
	old := c.start(1, unlosableLease{c.log.Lease()}, stuck)
	waitFor(t, "the first process to hold the lease", func() bool { _, held := old.LeaseHolder(); return held })
	stuck.fail(true)
	t.Cleanup(func() { stuck.fail(false) })
	waitFor(t, "a heartbeat call to hang", func() bool { return stuck.blocked.Load() > 0 })
	c.start(1, c.log.Lease(), c.log.Heartbeats())
	if !fencedWithin(old, 20*testFailoverAfter) {
		t.Fatal("a superseded process whose heartbeat calls hang does not see it is fenced")
	}
	waitFor(t, "the fenced process to let the lease go", func() bool { _, held := old.LeaseHolder(); return !held })
}

// A judge whose fencing proposal hangs (its metadata log stopped taking
// rows) still beats and still sees that it is fenced: the proposal gets one
// beat, not the judge's whole loop.
func TestFencingNeverHoldsUpTheJudge(t *testing.T) {
	c := newFailoverCluster(t)
	judgeLog := &hangingAppends{MetaLog: c.log}
	judgeBeats := newDroppingBeats(c.log.Heartbeats())
	judge := c.start(1, c.log.Lease(), judgeBeats, func(cfg *Config) { cfg.Log = judgeLog })
	waitFor(t, "the judge to hold the lease", func() bool { _, held := judge.LeaseHolder(); return held })
	beats := &droppingBeats{Heartbeats: c.log.Heartbeats()}
	c.start(2, nil, beats)
	c.awaitRecords(2)
	judgeLog.fail(true)
	t.Cleanup(func() { judgeLog.fail(false) })
	beats.down.Store(true)
	waitFor(t, "the judge's fence proposal to hang", func() bool { return judgeLog.gate.blocked.Load() > 0 })
	judgeBeats.fail(true) // silent, so that its restart may supersede it
	c.start(1, nil, c.log.Heartbeats())
	if !fencedWithin(judge, 20*testFailoverAfter) {
		t.Fatal("a judge whose fence proposal hangs does not see it is fenced")
	}
}

// A node that stops cleanly leaves the cluster itself: it takes no more
// placements at once, and failover has nothing to fence.
func TestCleanStopLeavesTheCluster(t *testing.T) {
	c := newFailoverCluster(t)
	judge := c.start(1, c.log.Lease(), c.log.Heartbeats())
	leaving := c.start(2, nil, c.log.Heartbeats())
	c.awaitRecords(2)
	if err := leaving.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the judge to see node 2 leave", func() bool { return registration(judge, 2).Epoch == leaving.Epoch()+1 })
	if reg := registration(judge, 2); reg.Slots != 0 {
		t.Fatalf("node 2 left with %d slots, want 0", reg.Slots)
	}
	time.Sleep(3 * testFailoverAfter)
	if n := judge.Stats().NodesFenced; n != 0 {
		t.Fatalf("the judge fenced %d nodes after a clean stop, want 0", n)
	}
}

// A process whose beats stop being confirmed answers for its streams with
// ErrUnavailable once the cluster may have fenced it, never from its own
// state, and answers again once a beat is confirmed.
func TestUnconfirmedBeatsStopFinalAnswers(t *testing.T) {
	c := newFailoverCluster(t)
	beats := newFlakyBeats(c.log.Heartbeats())
	n := c.start(1, nil, beats)
	ctx := context.Background()
	svc := n.Streams()
	if _, _, err := svc.Create(ctx, "/s", domain.StreamConfig{}, nil, false); err != nil {
		t.Fatal(err)
	}
	gap := ports.AppendRequest{Records: []domain.Record{{Body: []byte("x")}}, Producer: &domain.ProducerStamp{ID: "p", Seq: 5}}
	if _, err := svc.Append(ctx, "/s", gap); !errors.Is(err, ports.ErrProducerGap) {
		t.Fatalf("a gap while the beats are confirmed: %v, want ErrProducerGap", err)
	}
	beats.fail(true)
	waitFor(t, "the tenure to end", func() bool {
		_, err := svc.Append(ctx, "/s", gap)
		return errors.Is(err, ports.ErrUnavailable)
	})
	if _, err := svc.Read(ctx, "/s", 0, ports.ReadLimits{}); !errors.Is(err, ports.ErrUnavailable) {
		t.Errorf("a read with the beats unconfirmed: %v, want ErrUnavailable", err)
	}
	if err := n.Ready(); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "heartbeat has not been confirmed") {
		t.Errorf("ready with the beats unconfirmed: %v", err)
	}
	beats.fail(false)
	waitFor(t, "a confirmed beat", func() bool { return n.Ready() == nil })
	if _, err := svc.Append(ctx, "/s", gap); !errors.Is(err, ports.ErrProducerGap) {
		t.Fatalf("a gap once a beat is confirmed again: %v, want ErrProducerGap", err)
	}
}

// The judge sees a beating node alive, a silent one suspect, then fenced.
func TestLivenessFollowsTheHeartbeats(t *testing.T) {
	c := newFailoverCluster(t)
	judge := c.start(1, c.log.Lease(), c.log.Heartbeats())
	beats := newDroppingBeats(c.log.Heartbeats())
	c.start(2, nil, beats)
	state := func(id domain.NodeID) string { s, _, _ := judge.Liveness(id); return s }
	waitFor(t, "node 2 alive", func() bool { return state(2) == StateAlive })
	if s, _, known := judge.Liveness(1); !known || s != StateAlive {
		t.Fatalf("the judge sees itself %q (known %v), want alive", s, known)
	}
	beats.fail(true)
	waitFor(t, "node 2 suspect", func() bool { return state(2) == StateSuspect })
	if _, quiet, _ := judge.Liveness(2); quiet < 2*20*time.Millisecond {
		t.Errorf("a suspect whose heartbeat looked the same for %v, want at least two beats", quiet)
	}
	waitFor(t, "node 2 fenced", func() bool { return state(2) == StateFenced })
	if _, _, known := judge.Liveness(3); known {
		t.Error("an unregistered node has a state")
	}
	leaving := c.start(3, nil, c.log.Heartbeats())
	waitFor(t, "node 3 alive", func() bool { return state(3) == StateAlive })
	if err := leaving.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 3 left", func() bool { return state(3) == StateLeft })
	if state(2) != StateFenced {
		t.Errorf("node 2, fenced by the cluster, shows %q", state(2))
	}
}
