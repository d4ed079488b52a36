package node

import (
	"context"
	"errors"
	"slices"
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

func silentIDs(w beatWatch, v *domain.State, now time.Time) []domain.NodeID {
	var ids []domain.NodeID
	for _, n := range w.silent(v, 1, now, 10*time.Second) {
		ids = append(ids, n.ID)
	}
	return ids
}

// A node is silent once its record at its registered epoch has not changed
// for the whole window on the watcher's clock, whatever clock it beats by.
func TestBeatWatchJudgesSilenceOnItsOwnClock(t *testing.T) {
	v := registered(t, domain.Proposer{Node: 1, Epoch: 10}, domain.Proposer{Node: 2, Epoch: 20},
		domain.Proposer{Node: 3, Epoch: 30}, domain.Proposer{Node: 4, Epoch: 40})
	t0 := time.Unix(1_700_000_000, 0)
	skewed := t0.Add(-time.Hour) // node 2's clock is an hour behind
	beats := func(at2 time.Time) []ports.Heartbeat {
		return []ports.Heartbeat{
			{Node: 1, Epoch: 10, At: t0},  // the watcher itself: never judged
			{Node: 2, Epoch: 20, At: at2}, // judged
			{Node: 3, Epoch: 29, At: t0},  // a superseded process: node 3 never beat at 30
			{Node: 5, Epoch: 50, At: t0},  // not registered
		} // node 4 never beat
	}
	var w beatWatch
	w = w.observe(beats(skewed), t0)
	if got := silentIDs(w, &v, t0.Add(9*time.Second)); len(got) != 0 {
		t.Fatalf("silent after 9s: %v", got)
	}
	// Node 2 beats at 9s: its silence starts again, from the watcher's 9s.
	w = w.observe(beats(skewed.Add(9*time.Second)), t0.Add(9*time.Second))
	if got := silentIDs(w, &v, t0.Add(18*time.Second)); len(got) != 0 {
		t.Fatalf("silent 9s after a beat: %v", got)
	}
	w = w.observe(beats(skewed.Add(9*time.Second)), t0.Add(19*time.Second))
	if got := silentIDs(w, &v, t0.Add(19*time.Second)); !slices.Equal(got, []domain.NodeID{2}) {
		t.Fatalf("silent 10s after its last beat: %v, want [2]", got)
	}
	// Fenced, node 2 is registered at the next epoch, where it never beat.
	if r := v.Apply(&domain.FenceNode{By: domain.Proposer{Node: 1, Epoch: 10}, Node: 2, Epoch: 20}); !r.OK() {
		t.Fatal(r)
	}
	if got := silentIDs(w, &v, t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("silent once fenced: %v", got)
	}
	// A watcher that just started (an empty watch) judges nobody yet.
	if got := silentIDs(beatWatch(nil).observe(beats(skewed), t0.Add(time.Hour)), &v, t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a fresh watch judged %v", got)
	}
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

// A node whose heartbeat stops is fenced by the lease holder, with no
// operator: its streams open on the holder with every append it
// acknowledged, it learns it was fenced, and it can no longer append. Live
// nodes are left alone.
func TestFailoverFencesASilentNode(t *testing.T) {
	log, store := memlog.New(), memstore.New()
	ctx := context.Background()
	const after = 300 * time.Millisecond
	start := func(id domain.NodeID, lease ports.Lease, beats ports.Heartbeats) *Node {
		n, err := Start(ctx, Config{ID: id, Address: "x", Slots: 1, Log: log, Lease: lease, Store: store,
			Heartbeats: beats, FailoverAfter: after, BeatEvery: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close() })
		return n
	}
	judge := start(1, log.Lease(), log.Heartbeats())
	beats := &switchableBeats{Heartbeats: log.Heartbeats()}
	doomed := start(2, nil, beats) // never the lease holder
	if _, _, err := doomed.Streams().Create(ctx, "/s", domain.StreamConfig{}, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"a", "b", "c"} {
		if _, err := doomed.Streams().Append(ctx, "/s", ports.AppendRequest{Records: []domain.Record{{Body: []byte(body)}}}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(4 * after) // both beating: nobody is fenced
	if reg := registration(judge, 2); reg.Epoch != doomed.Epoch() {
		t.Fatalf("a beating node was fenced: registered at %d, runs at %d", reg.Epoch, doomed.Epoch())
	}

	beats.off.Store(true)
	select {
	case <-doomed.Fenced():
	case <-time.After(20 * after):
		t.Fatal("the silent node was not fenced")
	}
	if reg := registration(judge, 2); reg.Epoch != doomed.Epoch()+1 || reg.Slots != 0 {
		t.Fatalf("node 2 registered at epoch %d with %d slots, want %d and 0", reg.Epoch, reg.Slots, doomed.Epoch()+1)
	}
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
	if reg := registration(judge, 1); reg.Epoch != judge.Epoch() {
		t.Fatal("the judge fenced itself")
	}
	select {
	case <-judge.Fenced():
		t.Fatal("the judge counts itself fenced")
	default:
	}
	if errors.Is(judge.Ready(), ErrNotReady) {
		t.Fatalf("judge not ready: %v", judge.Ready())
	}
}
