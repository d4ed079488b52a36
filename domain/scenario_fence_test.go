package domain

import (
	"fmt"
	"testing"
)

func TestFenceNodeRetiresAProcessAndFreesItsStreams(t *testing.T) {
	s := NewState()
	a, b := Proposer{Node: 1, Epoch: 5}, Proposer{Node: 2, Epoch: 9}
	for _, c := range []Command{
		&RegisterNode{Node: 1, Epoch: 5, Slots: 1}, &RegisterNode{Node: 2, Epoch: 9, Slots: 1},
		&CreateStream{By: a, Name: "/s", Open: true},
	} {
		if r := s.Apply(c); r.Code != ResultOK {
			t.Fatalf("%T: %v", c, r)
		}
	}
	st, _ := s.StreamByName("/s")
	if r := s.Apply(&OpenStream{By: b, Stream: st.ID, Epoch: 2}); r.Code != ResultNotClosed {
		t.Fatalf("open of a live node's stream: %v", r)
	}
	if r := s.Apply(&FenceNode{By: b, Node: 1, Epoch: 6}); r.Code != ResultInvalid {
		t.Fatalf("fence at a wrong epoch: %v", r)
	}
	if r := s.Apply(&FenceNode{By: b, Node: 1, Epoch: 5}); r.Code != ResultOK || r.Value != 6 {
		t.Fatalf("fence: %v", r)
	}
	if r := s.Apply(&FenceNode{By: b, Node: 1, Epoch: 5}); r.Code != ResultRedundant {
		t.Fatalf("fence again: %v", r)
	}
	if st, _ = s.StreamByName("/s"); s.IsOpen(st) {
		t.Fatal("the fenced process's stream still counts as open")
	}
	if r := s.Apply(&PutKV{By: a, Space: SpaceRegistry, Key: "k", Value: []byte("v")}); r.Code != ResultNodeFenced {
		t.Fatalf("fenced process proposes: %v", r)
	}
	if r := s.Apply(&OpenStream{By: b, Stream: st.ID, Epoch: 2}); r.Code != ResultOK {
		t.Fatalf("takeover: %v", r)
	}
	if r := s.Apply(&RegisterNode{Node: 1, Epoch: 6, Slots: 1}); r.Code != ResultNodeFenced {
		t.Fatalf("re-register at the fenced epoch: %v", r)
	}
	if r := s.Apply(&RegisterNode{Node: 1, Epoch: 7, Slots: 1}); r.Code != ResultOK {
		t.Fatalf("rejoin: %v", r)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// A takeover lists the writer it fences until a writer records its recovery
// done: one that dies while recovering leaves its predecessor listed too.
func TestUnrecoveredWritersAreListedUntilRecovered(t *testing.T) {
	a, b, c := Proposer{Node: 1, Epoch: 1}, Proposer{Node: 2, Epoch: 1}, Proposer{Node: 3, Epoch: 1}
	b2 := Proposer{Node: 2, Epoch: 2}
	unrecovered := func(want ...Proposer) step {
		return inspect(func(t *testing.T, s *State) {
			t.Helper()
			if got := stream(t, s, 1).Unrecovered; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("unrecovered = %v, want %v", got, want)
			}
		})
	}
	runScenarios(t, []scenario{
		{"writers die while recovering", []step{
			expectCode(reg(1, 1), ResultOK), expectCode(reg(2, 1), ResultOK), expectCode(reg(3, 1), ResultOK),
			expectVal(create(a, "/s", true), ResultOK, 1),
			unrecovered(),
			expectCode(reg(1, 2), ResultOK), // a dies
			expectVal(open(b, 1, 2), ResultOK, 2),
			unrecovered(a),
			expectCode(reg(2, 2), ResultOK), // b dies before recovering
			expectVal(open(c, 1, 3), ResultOK, 3),
			unrecovered(a, b),
			expectCode(&RecoveredStream{By: b, Stream: 1, Epoch: 2}, ResultNodeFenced),
			expectCode(&RecoveredStream{By: b2, Stream: 1, Epoch: 3}, ResultStaleEpoch),
			expectCode(&RecoveredStream{By: c, Stream: 1, Epoch: 2}, ResultStaleEpoch),
			expectVal(&RecoveredStream{By: c, Stream: 1, Epoch: 3}, ResultOK, 3),
			unrecovered(),
			expectCode(&RecoveredStream{By: c, Stream: 1, Epoch: 3}, ResultRedundant),
			expectCode(&RecoveredStream{By: c, Stream: 9, Epoch: 3}, ResultNotFound),
		}},
		{"a clean close or a reopen by the writer lists nobody", []step{
			expectCode(reg(1, 1), ResultOK), expectCode(reg(2, 1), ResultOK),
			expectVal(create(a, "/s", true), ResultOK, 1),
			expectVal(open(a, 1, 2), ResultOK, 2), // the writer fences itself
			unrecovered(),
			expectCode(closeS(a, 1, 2), ResultOK),
			expectVal(open(b, 1, 3), ResultOK, 3),
			unrecovered(),
		}},
		{"a transfer lists a writer that vanished, and names no process", []step{
			expectCode(reg(1, 1), ResultOK), expectCode(reg(2, 1), ResultOK), expectCode(reg(3, 1), ResultOK),
			expectVal(create(a, "/s", true), ResultOK, 1),
			expectCode(reg(1, 2), ResultOK),
			expectVal(open(b, 1, 2), ResultOK, 2),
			expectCode(reg(2, 2), ResultOK),
			expectVal(open(c, 1, 3), ResultOK, 3),
			expectCode(reg(3, 2), ResultOK), // c dies too
			expectCode(&StartTransfer{By: Proposer{Node: 1, Epoch: 2}, Stream: 1, To: 2}, ResultOK),
			expectCode(&CompleteTransfer{By: Proposer{Node: 1, Epoch: 2}, Stream: 1, Epoch: 3}, ResultOK),
			unrecovered(a, b, c),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); st.Owner != 2 || st.OwnerEpoch != 0 || st.Open {
					t.Fatalf("transferred stream = %+v, want owner 2, no process, closed", *st)
				}
			}),
			expectVal(open(b2, 1, 4), ResultOK, 4),
			unrecovered(a, b, c),
		}},
		{"a writer is listed once", []step{
			expectCode(reg(1, 1), ResultOK), expectCode(reg(2, 1), ResultOK),
			expectVal(create(a, "/s", true), ResultOK, 1),
			expectCode(reg(1, 2), ResultOK),
			expectVal(open(b, 1, 2), ResultOK, 2),
			expectCode(closeS(b, 1, 2), ResultOK), // b closes without recovering
			expectVal(open(b, 1, 3), ResultOK, 3),
			unrecovered(a),
		}},
	})
}

// A WAL is in use while a stream is open on its process or lists it as
// unrecovered; a process is superseded once its node registers again.
func TestWALsInUseAndSuperseded(t *testing.T) {
	a, b := Proposer{Node: 1, Epoch: 1}, Proposer{Node: 2, Epoch: 1}
	s := NewState()
	run(t, &s, []step{
		expectCode(reg(1, 1), ResultOK), expectCode(reg(2, 1), ResultOK),
		expectVal(create(a, "/s", true), ResultOK, 1),
		inspect(func(t *testing.T, s *State) {
			if used := s.WALsInUse(); !used[a] || used[b] || s.Superseded(a) {
				t.Fatalf("in use %v, a superseded %v", used, s.Superseded(a))
			}
		}),
		expectCode(reg(1, 2), ResultOK),
		expectVal(open(b, 1, 2), ResultOK, 2),
		inspect(func(t *testing.T, s *State) {
			if used := s.WALsInUse(); !used[a] || !used[b] || !s.Superseded(a) || s.Superseded(Proposer{Node: 1, Epoch: 3}) {
				t.Fatalf("after the takeover: in use %v", used)
			}
		}),
		expectCode(&RecoveredStream{By: b, Stream: 1, Epoch: 2}, ResultOK),
		expectCode(closeS(b, 1, 2), ResultOK),
		inspect(func(t *testing.T, s *State) {
			if used := s.WALsInUse(); len(used) != 0 {
				t.Fatalf("after recovery and a clean close: in use %v", used)
			}
		}),
	})
}
