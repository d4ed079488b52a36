package domain

import (
	"errors"
	"fmt"
	"testing"
)

// cluster is a state with nodes 1..len(slots) registered at epoch 10+id
// with the given slots.
func cluster(t *testing.T, slots ...uint32) *State {
	t.Helper()
	s := NewState()
	for i, n := range slots {
		id := NodeID(i + 1)
		if r := s.Apply(&RegisterNode{Node: id, Epoch: 10 + uint64(id), Slots: n}); !r.OK() {
			t.Fatalf("register node %d: %v", id, r)
		}
	}
	return &s
}

func by(id NodeID) Proposer { return Proposer{Node: id, Epoch: 10 + uint64(id)} }

// placeMany places n streams, all proposed by node 1, and counts them by
// the node each opened on.
func placeMany(t *testing.T, s *State, n int) map[NodeID]int {
	t.Helper()
	for i := range n {
		if r := s.Apply(&PlaceStream{By: by(1), Name: fmt.Sprintf("/s/%d", i)}); !r.OK() {
			t.Fatalf("place %d: %v", i, r)
		}
	}
	return ownersOf(s)
}

func ownersOf(s *State) map[NodeID]int {
	owners := map[NodeID]int{}
	s.streams.All(func(_ uint64, st *Stream) bool { owners[st.Owner]++; return true })
	return owners
}

func TestPlacementSharesFollowSlots(t *testing.T) {
	s := cluster(t, 1, 1, 2)
	owners := placeMany(t, s, 400)
	for node, want := range map[NodeID]float64{1: 25, 2: 25, 3: 50} {
		if got := float64(owners[node]) / 4; got < want-5 || got > want+5 {
			t.Errorf("node %d got %.1f%% of the streams, want %.0f%% ± 5", node, got, want)
		}
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestPlacementSkipsNodesWithoutSlotsFencedOrLeft(t *testing.T) {
	s := cluster(t, 1, 0, 1, 3, 2)
	if r := s.Apply(&FenceNode{By: by(1), Node: 4, Epoch: 14}); !r.OK() {
		t.Fatal(r)
	}
	if r := s.Apply(&FenceNode{By: by(5), Node: 5, Epoch: 15}); !r.OK() { // node 5 leaves
		t.Fatal(r)
	}
	owners := placeMany(t, s, 50)
	if owners[2] != 0 || owners[4] != 0 || owners[5] != 0 {
		t.Errorf("streams placed on a node without slots (%d), a fenced one (%d) or one that left (%d)", owners[2], owners[4], owners[5])
	}
	if owners[1]+owners[3] != 50 {
		t.Errorf("owners %v, want 50 streams on nodes 1 and 3", owners)
	}
}

func TestPlacementIsTheSameOnEveryReplica(t *testing.T) {
	a, b := cluster(t, 3, 1, 2), cluster(t, 3, 1, 2)
	for i := range 60 {
		c := &PlaceStream{By: by(NodeID(1 + i%3)), Name: fmt.Sprintf("/r/%d", i), Content: i%2 == 0}
		if ra, rb := a.Apply(c), b.Apply(c); ra != rb {
			t.Fatalf("step %d: results differ: %v and %v", i, ra, rb)
		}
	}
	if a.Hash() != b.Hash() {
		t.Fatal("replicas differ after the same placements")
	}
}

func TestPlacedStreamOpensOnItsNode(t *testing.T) {
	s := cluster(t, 0, 1)
	r := s.Apply(&PlaceStream{By: by(1), Name: "/x", Content: true})
	st, _ := s.Stream(r.Value)
	if st.Owner != 2 || st.OwnerEpoch != 12 || st.Epoch != 1 || !s.IsOpen(st) || !st.AwaitsCreate {
		t.Fatalf("placed stream %+v: want open on node 2 at its epoch, awaiting its create", st)
	}
	if r := s.Apply(&PlaceStream{By: by(1), Name: "/x"}); r.Code != ResultExists || r.Value != st.ID {
		t.Errorf("second place of /x: %v, want exists with id %d", r, st.ID)
	}
	r = s.Apply(&PlaceStream{By: by(2), Name: "/own", Content: true})
	if own, _ := s.Stream(r.Value); own.Owner != 2 || own.AwaitsCreate {
		t.Errorf("stream placed on its proposer: %+v, want open there, awaiting nothing", own)
	}
	n, _ := s.Node(2)
	if n.Assigned != 2 {
		t.Errorf("node 2 has %d streams assigned, want 2", n.Assigned)
	}
}

func TestPlacementFallsBackToTheProposer(t *testing.T) {
	s := cluster(t, 0, 0)
	r := s.Apply(&PlaceStream{By: by(2), Name: "/x", Content: true})
	if st, _ := s.Stream(r.Value); st.Owner != 2 || st.AwaitsCreate {
		t.Fatalf("with no node taking placements: %+v, want it on its proposer", st)
	}
}

func TestClusterLevel(t *testing.T) {
	s := cluster(t, 1, 1, 0)
	if got := s.ClusterLevel(); got != LevelBase {
		t.Fatalf("nodes that declared nothing: level %d, want %d", got, LevelBase)
	}
	declare := func(id NodeID, l Level) {
		t.Helper()
		if r := s.Apply(DeclareLevel(by(id), l)); !r.OK() {
			t.Fatal(r)
		}
	}
	declare(1, LevelPlacement)
	if got := s.ClusterLevel(); got != LevelBase {
		t.Errorf("one node of two with slots declared: level %d, want %d", got, LevelBase)
	}
	declare(2, LevelPlacement)
	if got := s.ClusterLevel(); got != LevelPlacement {
		t.Errorf("every node with slots declared: level %d, want %d (a node without slots that declares nothing does not count)", got, LevelPlacement)
	}
	declare(3, LevelBase)
	if got := s.ClusterLevel(); got != LevelBase {
		t.Errorf("a node without slots declared the base level: %d, want %d", got, LevelBase)
	}
	if r := s.Apply(&FenceNode{By: by(1), Node: 3, Epoch: 13}); !r.OK() {
		t.Fatal(r)
	}
	if got := s.ClusterLevel(); got != LevelPlacement {
		t.Errorf("the base-level node was fenced: level %d, want %d", got, LevelPlacement)
	}
	if r := s.Apply(&RegisterNode{Node: 2, Epoch: 99, Slots: 1}); !r.OK() {
		t.Fatal(r)
	}
	if l, declared := s.NodeLevel(2); declared || s.ClusterLevel() != LevelBase {
		t.Errorf("node 2 restarted without declaring: declared %d (%v), cluster %d; want none and base", l, declared, s.ClusterLevel())
	}
}

func TestOlderSnapshotKeepsEveryFactOrRefuses(t *testing.T) {
	s := cluster(t, 1, 1)
	s.Apply(&PlaceStream{By: by(1), Name: "/a"})
	b, err := EncodeStateAt(s, 5)
	if err != nil {
		t.Fatal(err)
	}
	if SnapshotLevel(b) != LevelBase {
		t.Errorf("a version 5 snapshot needs level %d, want %d", SnapshotLevel(b), LevelBase)
	}
	back, err := DecodeState(b)
	if err != nil || back.Hash() != s.Hash() {
		t.Fatalf("version 5 round trip: %v (hash equal: %v)", err, err == nil && back.Hash() == s.Hash())
	}
	s.Apply(&PlaceStream{By: by(1), Name: "/b", Content: true}) // placed on node 2, awaiting its create
	if _, err := EncodeStateAt(s, 5); !errors.Is(err, ErrOlderSnapshot) {
		t.Fatalf("version 5 of a state with a stream awaiting its create: %v, want ErrOlderSnapshot", err)
	}
	b, err = EncodeStateAt(s, SnapshotVersionAt(LevelPlacement))
	if err != nil || SnapshotLevel(b) != LevelPlacement {
		t.Fatalf("version 6: %v, level %d", err, SnapshotLevel(b))
	}
	if back, err := DecodeState(b); err != nil || back.Hash() != s.Hash() {
		t.Fatalf("version 6 round trip: %v", err)
	}
}

func TestCommandLevels(t *testing.T) {
	for _, c := range AllCodes() {
		want := LevelBase
		if c > CodeSealStreamBy {
			want = LevelPlacement
		}
		if got := CommandLevel(c); got != want || got > LevelCurrent {
			t.Errorf("command %d is at level %d, want %d (at most %d)", c, got, want, LevelCurrent)
		}
	}
}

func TestANodeThatLeftIsToldFromAFencedOne(t *testing.T) {
	s := cluster(t, 1, 1)
	s.Apply(&FenceNode{By: by(1), Node: 1, Epoch: 11}) // node 1 fences itself: it leaves
	s.Apply(&RegisterNode{Node: 3, Epoch: 13, Slots: 1})
	s.Apply(&FenceNode{By: Proposer{Node: 3, Epoch: 13}, Node: 2, Epoch: 12}) // node 2 is fenced by node 3
	one, _ := s.Node(1)
	two, _ := s.Node(2)
	if !one.Left || one.Slots != 0 || two.Left {
		t.Fatalf("node 1 after leaving %+v, node 2 after its fence %+v: want only node 1 left", one, two)
	}
	s.Apply(&RegisterNode{Node: 1, Epoch: 20, Slots: 1})
	if again, _ := s.Node(1); again.Left {
		t.Errorf("node 1 registered again is still marked left: %+v", again)
	}
	if _, err := EncodeStateAt(s, 5); err != nil {
		t.Errorf("version 5 once no node is marked left: %v", err)
	}
}
