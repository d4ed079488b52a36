package domain

import "testing"

// TestForksPinTheirSourceAndCascade: a fork pins its source (no trim, a
// delete only soft-deletes it) and deleting the last fork removes the
// soft-deleted chain above it, objects included.
func TestForksPinTheirSourceAndCascade(t *testing.T) {
	s := NewState()
	a := Proposer{Node: 1, Epoch: 1}
	mustApply := func(c Command, want ResultCode) Result {
		t.Helper()
		r := s.Apply(c)
		if r.Code != want {
			t.Fatalf("%T: %v, want %v", c, r, want)
		}
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("after %T: %v", c, err)
		}
		return r
	}
	mustApply(&RegisterNode{Node: 1, Epoch: 1, Slots: 1}, ResultOK)
	src := mustApply(&CreateStream{By: a, Name: "/src", Open: true}, ResultOK).Value
	obj := mustApply(&ReserveObjects{By: a, Count: 1, TTLMs: 1000}, ResultOK).Value
	mustApply(&CommitObjects{By: a, Objects: []ObjectSpec{{ID: obj, Size: 10,
		Ranges: []Range{{Stream: src, Epoch: 1, Start: 0, End: 5}}}}}, ResultOK)

	mustApply(&CreateFork{By: a, Name: "/bad", Source: src, At: 6}, ResultInvalid)
	mustApply(&CreateFork{By: a, Name: "/bad", Source: 99, At: 0}, ResultNotFound)
	fork := mustApply(&CreateFork{By: a, Name: "/fork", Source: src, At: 3}, ResultOK).Value
	grand := mustApply(&CreateFork{By: a, Name: "/grand", Source: fork, At: 3}, ResultOK).Value
	if st, _ := s.Stream(fork); st.ForkOf != src || st.ForkAt != 3 || st.Start != 3 || st.End != 3 || !s.IsOpen(st) {
		t.Fatalf("fork: %+v", st)
	}
	mustApply(&TrimStream{By: a, Stream: src, Epoch: 1, Start: 2}, ResultConflict)

	mustApply(&DeleteStream{By: a, Stream: src, Epoch: 1}, ResultOK)
	if st, ok := s.StreamByName("/src"); !ok || !st.SoftDeleted || s.GarbageCount() != 0 {
		t.Fatalf("source with forks: %+v (garbage %d), want soft-deleted with its objects", st, s.GarbageCount())
	}
	mustApply(&CreateStream{By: a, Name: "/src"}, ResultExists)
	mustApply(&CreateFork{By: a, Name: "/x", Source: src, At: 1}, ResultConflict)
	mustApply(&OpenStream{By: a, Stream: src, Epoch: 2}, ResultConflict)
	mustApply(&DeleteStream{By: a, Stream: src, Epoch: 1}, ResultNotFound)

	mustApply(&DeleteStream{By: a, Stream: fork, Epoch: 1}, ResultOK) // has a fork: soft
	if _, ok := s.StreamByName("/src"); !ok {
		t.Fatal("the source went while a fork of its fork still reads it")
	}
	mustApply(&DeleteStream{By: a, Stream: grand, Epoch: 1}, ResultOK)
	for _, name := range []string{"/src", "/fork", "/grand"} {
		if _, ok := s.StreamByName(name); ok {
			t.Fatalf("%s still exists after the last fork was deleted", name)
		}
	}
	if s.GarbageCount() != 1 {
		t.Fatalf("the source's object is not garbage after the cascade (%d)", s.GarbageCount())
	}
}
