package domain

import "testing"

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
