package domain

import (
	"bytes"
	"fmt"
	"testing"
)

// step is a command with the result it must get, or an inspection.
type step struct {
	cmd     Command
	want    ResultCode
	value   uint64
	checkV  bool
	inspect func(t *testing.T, s *State)
}

func expectCode(c Command, code ResultCode) step { return step{cmd: c, want: code} }
func expectVal(c Command, code ResultCode, v uint64) step {
	return step{cmd: c, want: code, value: v, checkV: true}
}
func inspect(fn func(t *testing.T, s *State)) step { return step{inspect: fn} }

// scenario is a named sequence of steps run from an empty state.
type scenario struct {
	name  string
	steps []step
}

// run applies the steps; every rejected command must leave the state as it
// was (apart from Applied) and invariants must hold after every step.
func run(t *testing.T, s *State, steps []step) {
	t.Helper()
	for i, st := range steps {
		if st.inspect != nil {
			st.inspect(t, s)
			continue
		}
		before := *s
		before.Applied++
		want := EncodeState(&before)
		r := s.Apply(st.cmd)
		if r.Code != st.want || (st.checkV && r.Value != st.value) {
			v := "any"
			if st.checkV {
				v = fmt.Sprint(st.value)
			}
			t.Fatalf("step %d %s: got %v, want %v(%s)", i, describe(st.cmd), r, st.want, v)
		}
		if r.Code != ResultOK && !bytes.Equal(EncodeState(s), want) {
			t.Fatalf("step %d %s: rejected (%v) but the state changed", i, describe(st.cmd), r)
		}
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("step %d %s: %v", i, describe(st.cmd), err)
		}
	}
}

func runScenarios(t *testing.T, scenarios []scenario) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := NewState()
			run(t, &s, sc.steps)
		})
	}
}

// Shorthands for readable scenarios.
func reg(node NodeID, epoch uint64) *RegisterNode {
	return &RegisterNode{Node: node, Epoch: epoch, Address: fmt.Sprintf("n%d:7000", node), Slots: 4}
}
func create(by Proposer, name string, open bool) *CreateStream {
	return &CreateStream{By: by, Name: name, Open: open, Meta: []byte("m")}
}
func open(by Proposer, id, epoch uint64) *OpenStream {
	return &OpenStream{By: by, Stream: id, Epoch: epoch}
}
func closeS(by Proposer, id, epoch uint64) *CloseStream {
	return &CloseStream{By: by, Stream: id, Epoch: epoch}
}

func stream(t *testing.T, s *State, id uint64) *Stream {
	t.Helper()
	st, ok := s.Stream(id)
	if !ok {
		t.Fatalf("stream %d missing", id)
	}
	return st
}

func wantAssigned(t *testing.T, s *State, want map[NodeID]uint32) {
	t.Helper()
	for id, n := range want {
		if node, _ := s.Node(id); node == nil || node.Assigned != n {
			t.Errorf("node %d assigned %v, want %d", id, node, n)
		}
	}
}

var p1, p2, p3 = Proposer{1, 1}, Proposer{2, 1}, Proposer{3, 1}

func TestNodeScenarios(t *testing.T) {
	runScenarios(t, []scenario{
		{"registration epochs", []step{
			expectVal(reg(1, 1), ResultOK, 1),
			expectVal(reg(1, 1), ResultRedundant, 1),
			expectCode(&RegisterNode{Node: 1, Epoch: 1, Address: "elsewhere", Slots: 4}, ResultNodeFenced),
			expectCode(&RegisterNode{Node: 1, Epoch: 1, Address: "n1:7000", Slots: 5}, ResultNodeFenced),
			expectVal(reg(1, 3), ResultOK, 3),
			expectCode(reg(1, 2), ResultNodeFenced),
			expectCode(create(Proposer{1, 3}, "/s", true), ResultOK),
			expectVal(&RegisterNode{Node: 1, Epoch: 5, Address: "moved:1", Slots: 9}, ResultOK, 5),
			expectCode(reg(0, 1), ResultInvalid),
			inspect(func(t *testing.T, s *State) {
				n, _ := s.Node(1)
				if *n != (Node{ID: 1, Epoch: 5, Address: "moved:1", Slots: 9, Assigned: 1}) {
					t.Errorf("node 1 = %+v", *n)
				}
			}),
		}},
		{"proposer fencing after re-registration", []step{
			expectCode(reg(1, 1), ResultOK),
			expectVal(create(p1, "/a", true), ResultOK, 1),
			expectCode(reg(1, 2), ResultOK),
			expectCode(create(p1, "/b", true), ResultNodeFenced),
			expectCode(&SetStreamMeta{By: p1, Stream: 1, Epoch: 1}, ResultNodeFenced),
			expectCode(&PutKV{By: p1, Space: SpaceRegistry, Key: "k"}, ResultNodeFenced),
			expectCode(&SetSlots{By: p1, Node: 1, Slots: 1}, ResultNodeFenced),
			expectCode(create(Proposer{1, 3}, "/b", true), ResultNodeFenced),
			expectCode(create(Proposer{9, 1}, "/b", true), ResultNodeFenced),
			expectVal(create(Proposer{1, 2}, "/b", true), ResultOK, 2),
		}},
		{"set slots", []step{
			expectCode(reg(1, 1), ResultOK),
			expectVal(&SetSlots{By: p1, Node: 1, Slots: 0}, ResultOK, 0),
			expectCode(&SetSlots{By: p1, Node: 1, Slots: 0}, ResultRedundant),
			expectCode(&SetSlots{By: p1, Node: 2, Slots: 3}, ResultNotFound),
		}},
	})
}

func TestStreamScenarios(t *testing.T) {
	closer := func(t *testing.T, s *State, id uint64, want Closer) {
		t.Helper()
		st := stream(t, s, id)
		if !st.Sealed || st.Closer.Known != want.Known || (st.Closer.Producer == nil) != (want.Producer == nil) ||
			want.Producer != nil && *st.Closer.Producer != *want.Producer {
			t.Errorf("stream %d: sealed=%v closer %+v, want sealed by %+v", id, st.Sealed, st.Closer, want)
		}
	}
	stamp := &ProducerStamp{ID: "p", Epoch: 2, Seq: 7}
	runScenarios(t, []scenario{
		{"a seal names the request that made it", []step{
			expectCode(reg(1, 1), ResultOK),
			expectVal(create(p1, "/by-producer", true), ResultOK, 1),
			expectVal(create(p1, "/by-other", true), ResultOK, 2),
			expectVal(create(p1, "/unnamed", true), ResultOK, 3),
			expectCode(&SealStreamBy{By: p1, Stream: 1, Epoch: 0, Closer: stamp}, ResultStaleEpoch),
			expectVal(&SealStreamBy{By: p1, Stream: 1, Epoch: 1, Closer: stamp}, ResultOK, 1),
			expectVal(&SealStreamBy{By: p1, Stream: 1, Epoch: 1}, ResultRedundant, 1), // the first seal's request stays
			expectVal(&SealStreamBy{By: p1, Stream: 2, Epoch: 1}, ResultOK, 1),
			expectVal(&SealStream{By: p1, Stream: 3, Epoch: 1}, ResultOK, 1),
			inspect(func(t *testing.T, s *State) {
				closer(t, s, 1, Closer{Known: true, Producer: stamp})
				closer(t, s, 2, Closer{Known: true})
				closer(t, s, 3, Closer{})
				if !stream(t, s, 1).Closer.RepeatedBy(&ProducerStamp{ID: "p", Epoch: 2, Seq: 7}) ||
					stream(t, s, 1).Closer.RepeatedBy(&ProducerStamp{ID: "p", Epoch: 2, Seq: 6}) {
					t.Error("RepeatedBy does not compare the stamp")
				}
				got, err := DecodeState(EncodeState(s))
				if err != nil {
					t.Fatal(err)
				}
				closer(t, &got, 1, Closer{Known: true, Producer: stamp})
				closer(t, &got, 2, Closer{Known: true})
				closer(t, &got, 3, Closer{})
			}),
		}},
		{"create open close reopen", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectVal(create(p1, "/s", false), ResultOK, 1),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); st.Epoch != 0 || s.IsOpen(st) || st.Owner != 0 {
					t.Errorf("created closed stream = %+v", *st)
				}
			}),
			expectVal(open(p1, 1, 1), ResultOK, 1),
			expectCode(open(p1, 1, 1), ResultRedundant),
			expectCode(open(p2, 1, 2), ResultNotClosed),
			expectCode(open(p2, 1, 1), ResultStaleEpoch),
			expectCode(closeS(p2, 1, 1), ResultStaleEpoch),
			expectCode(closeS(p1, 1, 0), ResultStaleEpoch),
			expectCode(closeS(p1, 1, 1), ResultOK),
			expectCode(closeS(p1, 1, 1), ResultRedundant),
			expectVal(open(p2, 1, 2), ResultOK, 2),
			expectVal(open(p2, 1, 3), ResultOK, 3), // the writer may fence itself
			expectVal(create(p2, "/s", true), ResultExists, 1),
			expectCode(create(p2, "", true), ResultInvalid),
			expectCode(open(p2, 9, 1), ResultNotFound),
			inspect(func(t *testing.T, s *State) {
				st := stream(t, s, 1)
				if st.Epoch != 3 || st.Owner != 2 || !s.IsOpen(st) || string(st.Meta) != "m" {
					t.Errorf("stream = %+v", *st)
				}
				wantAssigned(t, s, map[NodeID]uint32{1: 0, 2: 1})
			}),
		}},
		{"meta is set by the writer only", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(create(p1, "/s", true), ResultOK),
			expectCode(&SetStreamMeta{By: p2, Stream: 1, Epoch: 1, Meta: []byte("x")}, ResultStaleEpoch),
			expectCode(&SetStreamMeta{By: p1, Stream: 1, Epoch: 2, Meta: []byte("x")}, ResultStaleEpoch),
			expectCode(&SetStreamMeta{By: p1, Stream: 1, Epoch: 1, Meta: make([]byte, MaxMetaLen+1)}, ResultInvalid),
			expectCode(&SetStreamMeta{By: p1, Stream: 1, Epoch: 1, Meta: []byte("x")}, ResultOK),
			inspect(func(t *testing.T, s *State) {
				if m := stream(t, s, 1).Meta; string(m) != "x" {
					t.Errorf("meta %q", m)
				}
			}),
		}},
		{"a restart closes the node's streams", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(create(p1, "/s", true), ResultOK),
			expectCode(open(p2, 1, 2), ResultNotClosed),
			expectCode(reg(1, 2), ResultOK),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); s.IsOpen(st) {
					t.Errorf("stream still open after its node restarted: %+v", *st)
				}
			}),
			expectCode(closeS(Proposer{1, 2}, 1, 1), ResultRedundant),
			expectVal(open(p2, 1, 2), ResultOK, 2),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); !s.IsOpen(st) || st.Owner != 2 {
					t.Errorf("stream = %+v", *st)
				}
				wantAssigned(t, s, map[NodeID]uint32{1: 0, 2: 1})
			}),
		}},
		{"transfer", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(reg(3, 1), ResultOK),
			expectCode(&RegisterNode{Node: 4, Epoch: 1, Slots: 0}, ResultOK),
			expectCode(create(p1, "/s", true), ResultOK),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 1}, ResultRedundant),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 4}, ResultInvalid),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 9}, ResultInvalid),
			expectVal(&StartTransfer{By: p1, Stream: 1, To: 2}, ResultOK, 2),
			expectCode(&StartTransfer{By: p3, Stream: 1, To: 2}, ResultRedundant),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 3}, ResultConflict),
			expectCode(&CompleteTransfer{By: p1, Stream: 1, Epoch: 1}, ResultNotClosed),
			expectCode(closeS(p1, 1, 1), ResultOK),
			expectCode(open(p3, 1, 2), ResultConflict),
			expectCode(&CompleteTransfer{By: p1, Stream: 1, Epoch: 0}, ResultStaleEpoch),
			expectVal(&CompleteTransfer{By: p1, Stream: 1, Epoch: 1}, ResultOK, 2),
			expectVal(&CompleteTransfer{By: p1, Stream: 1, Epoch: 1}, ResultRedundant, 2),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); st.Owner != 2 || st.TransferTo != 0 || s.IsOpen(st) {
					t.Errorf("stream = %+v", *st)
				}
				wantAssigned(t, s, map[NodeID]uint32{1: 0, 2: 1})
			}),
			expectVal(open(p2, 1, 2), ResultOK, 2),
		}},
		{"a transfer lapses when its target takes no placements", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(reg(3, 1), ResultOK),
			expectCode(create(p1, "/s", true), ResultOK),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 2}, ResultOK),
			expectCode(closeS(p1, 1, 1), ResultOK),
			expectCode(open(p3, 1, 2), ResultConflict),
			expectCode(&FenceNode{By: p1, Node: 2, Epoch: 1}, ResultOK),
			inspect(func(t *testing.T, s *State) {
				if got := s.PendingTransfer(stream(t, s, 1)); got != 0 {
					t.Errorf("pending transfer to a fenced node: %d", got)
				}
			}),
			expectVal(&StartTransfer{By: p1, Stream: 1, To: 3}, ResultOK, 3), // replaces the lapsed one
			expectVal(open(p3, 1, 2), ResultOK, 2),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); st.Owner != 3 || st.TransferTo != 0 {
					t.Errorf("stream = %+v", *st)
				}
			}),
		}},
		{"only its writer transfers an open stream, and may reopen it meanwhile", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(reg(3, 1), ResultOK),
			expectCode(create(p1, "/s", true), ResultOK),
			expectCode(&StartTransfer{By: p2, Stream: 1, To: 3}, ResultNotClosed),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 2}, ResultOK),
			expectCode(open(p3, 1, 2), ResultNotClosed),
			expectVal(open(p1, 1, 2), ResultOK, 2), // after a close of unknown outcome
			expectCode(closeS(p1, 1, 1), ResultStaleEpoch),
			expectCode(closeS(p1, 1, 2), ResultOK),
			expectCode(open(p1, 1, 3), ResultConflict),
			expectCode(open(p2, 1, 3), ResultOK),
		}},
		{"transfer target opens directly", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(create(p1, "/s", true), ResultOK),
			expectCode(&StartTransfer{By: p1, Stream: 1, To: 2}, ResultOK),
			expectCode(closeS(p1, 1, 1), ResultOK),
			expectCode(open(p1, 1, 2), ResultConflict),
			expectCode(open(p2, 1, 2), ResultOK),
			inspect(func(t *testing.T, s *State) {
				if st := stream(t, s, 1); st.Owner != 2 || st.TransferTo != 0 {
					t.Errorf("stream = %+v", *st)
				}
				wantAssigned(t, s, map[NodeID]uint32{1: 0, 2: 1})
			}),
		}},
		{"delete", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(reg(2, 1), ResultOK),
			expectCode(create(p1, "/a", true), ResultOK),
			expectCode(create(p1, "/b", false), ResultOK),
			expectCode(&DeleteStream{By: p1, Stream: 1, Epoch: 2}, ResultStaleEpoch),
			expectCode(&DeleteStream{By: p2, Stream: 1, Epoch: 1}, ResultNotClosed),
			expectVal(&DeleteStream{By: p1, Stream: 1, Epoch: 1}, ResultOK, 1),
			expectVal(&DeleteStream{By: p2, Stream: 2, Epoch: 0}, ResultOK, 2),
			expectCode(&DeleteStream{By: p1, Stream: 1, Epoch: 1}, ResultNotFound),
			inspect(func(t *testing.T, s *State) {
				if _, ok := s.StreamByName("/a"); ok || s.StreamCount() != 0 {
					t.Errorf("deleted stream still listed")
				}
				wantAssigned(t, s, map[NodeID]uint32{1: 0})
			}),
			expectVal(create(p2, "/a", true), ResultOK, 3),
		}},
	})
}

func TestApplyRowIndex(t *testing.T) {
	s := NewState()
	res := s.ApplyRow(5, []Command{reg(1, 1), reg(1, 1), create(p1, "/a", true)})
	if s.Index != 5 || s.Applied != 3 || len(res) != 3 || res[1].Code != ResultRedundant || res[2].Value != 1 {
		t.Fatalf("Index %d Applied %d results %v", s.Index, s.Applied, res)
	}
	s.ApplyRow(6, nil)
	if s.Index != 6 || s.Applied != 3 {
		t.Fatalf("empty row: Index %d Applied %d", s.Index, s.Applied)
	}
}
