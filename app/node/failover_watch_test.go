package node

import (
	"slices"
	"testing"
	"time"

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
		if r := v.Apply(domain.DeclareLevel(p, domain.LevelCurrent)); !r.OK() {
			t.Fatalf("declare the level of %v: %v", p, r)
		}
	}
	return v
}

// A process of an older release, which declares no level and beats less
// often, is judged by the window of that release, never a shorter one.
func TestBeatWatchGivesAnOlderReleaseItsWindow(t *testing.T) {
	v := registered(t, domain.Proposer{Node: 1, Epoch: 10})
	if r := v.Apply(&domain.RegisterNode{Node: 2, Epoch: 20, Address: "x", Slots: 1}); !r.OK() {
		t.Fatal(r)
	}
	t0 := time.Unix(1_700_000_000, 0)
	var w beatWatch
	for at := time.Duration(0); at <= 25*time.Second; at += time.Second {
		beats := []ports.Heartbeat{{Node: 1, Epoch: 10, At: t0.Add(at)}, {Node: 2, Epoch: 20, At: t0}}
		w = w.observe(&v, beats, t0.Add(at), t0.Add(at+100*time.Millisecond), 5*time.Second)
		silent := len(w.silent(&v, 1, 2*time.Second)) > 0
		if quiet := w.regs[2].quiet; silent != (quiet >= olderReleaseWindow) {
			t.Fatalf("node 2 quiet for %v: silent %v, want silent only from %v", quiet, silent, olderReleaseWindow)
		}
	}
	if len(w.silent(&v, 1, 2*time.Second)) != 1 {
		t.Fatal("node 2 was never judged silent")
	}
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
	w = w.interrupted(0)
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
	if r := v.Apply(domain.DeclareLevel(domain.Proposer{Node: 3, Epoch: 31}, domain.LevelCurrent)); !r.OK() {
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
	// Two bad rounds in a row keep at most the given quiet (12s -> 5s):
	// node 3 needs 5s of fresh silence again.
	w = w.interrupted(5 * time.Second)
	want("after one bad round", 3)
	w = w.interrupted(5 * time.Second)
	want("after two bad rounds in a row")
	for _, at := range []float64{77.5, 80, 82.5} {
		read(at)
	}
	want("4.8s after two bad rounds")
	read(85)
	want("7.2s after two bad rounds", 3)
	// A watcher that just started judges nobody yet.
	w = beatWatch{}
	read(100)
	want("a fresh watch")
}

// A watcher defers to each node of a lower id that looks alive: a record
// at its epoch that changed within the given time.
func TestBeatWatchCountsTheJudgesBefore(t *testing.T) {
	v := registered(t, domain.Proposer{Node: 1, Epoch: 10}, domain.Proposer{Node: 2, Epoch: 20},
		domain.Proposer{Node: 3, Epoch: 30}, domain.Proposer{Node: 4, Epoch: 40}, domain.Proposer{Node: 5, Epoch: 50})
	t0 := time.Unix(1_700_000_000, 0)
	var w beatWatch
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Second)
		beats := []ports.Heartbeat{
			{Node: 1, Epoch: 10, At: at}, // alive
			{Node: 2, Epoch: 20, At: t0}, // silent since the first reading
			{Node: 3, Epoch: 29, At: at}, // a superseded process of node 3
			{Node: 4, Epoch: 40, At: at}, // alive
			{Node: 5, Epoch: 50, At: at}, // the watcher
		}
		w = w.observe(&v, beats, at, at.Add(10*time.Millisecond), 5*time.Second)
	}
	for _, tc := range []struct {
		self domain.NodeID
		want int
	}{{1, 0}, {2, 1}, {4, 1}, {5, 2}} {
		if got := w.judgesBefore(&v, tc.self, 1500*time.Millisecond); got != tc.want {
			t.Errorf("node %d defers to %d judges, want %d", tc.self, got, tc.want)
		}
	}
}
