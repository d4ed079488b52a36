package domain

import "testing"

func reserve(by Proposer, n uint32) *ReserveObjects {
	return &ReserveObjects{By: by, Count: n, TTLMs: 1000, NowMs: 0}
}

// obj is an object spec holding the given ranges (stream, epoch, start, end).
func obj(id uint64, ranges ...Range) ObjectSpec {
	return ObjectSpec{ID: id, Size: 10 * id, Ranges: ranges}
}

func rg(stream, epoch, start, end uint64) Range {
	return Range{Stream: stream, Epoch: epoch, Start: start, End: end}
}

func commit(by Proposer, objs ...ObjectSpec) *CommitObjects {
	return &CommitObjects{By: by, Objects: objs, NowMs: 5}
}

func compact(by Proposer, spec ObjectSpec, replaces ...uint64) *CompactObjects {
	return &CompactObjects{By: by, Object: spec, Replaces: replaces, NowMs: 6}
}

// wantIndex checks a stream's start, end and offset -> object index.
func wantIndex(t *testing.T, s *State, id, start, end uint64, index map[uint64]uint64) {
	t.Helper()
	st := stream(t, s, id)
	if st.Start != start || st.End != end {
		t.Errorf("stream %d covers [%d,%d), want [%d,%d)", id, st.Start, st.End, start, end)
	}
	got := map[uint64]uint64{}
	st.Objects.All(func(off, oid uint64) bool { got[off] = oid; return true })
	if len(got) != len(index) {
		t.Errorf("stream %d index %v, want %v", id, got, index)
	}
	for off, oid := range index {
		if got[off] != oid {
			t.Errorf("stream %d index %v, want %v", id, got, index)
			break
		}
	}
}

func wantGarbage(t *testing.T, s *State, want map[uint64]GarbageReason) {
	t.Helper()
	got := map[uint64]GarbageReason{}
	s.GarbageFrom(0, func(id uint64, g Garbage) bool { got[id] = g.Reason; return true })
	if len(got) != len(want) {
		t.Errorf("garbage %v, want %v", got, want)
	}
	for id, r := range want {
		if got[id] != r {
			t.Errorf("garbage %v, want %v", got, want)
			break
		}
	}
}

func wantObjectAt(t *testing.T, s *State, id, off uint64, want uint64) {
	t.Helper()
	o, ok := s.ObjectAt(stream(t, s, id), off)
	if (want == 0) != !ok || (ok && o.ID != want) {
		t.Errorf("ObjectAt(stream %d, %d) = %v %v, want object %d", id, off, o, ok, want)
	}
}

// twoStreams: node 1 writes streams 1 (/a) and 2 (/b) and reserved ids 1..4.
var twoStreams = []step{
	expectCode(reg(1, 1), ResultOK),
	expectCode(reg(2, 1), ResultOK),
	expectCode(create(p1, "/a", true), ResultOK),
	expectCode(create(p1, "/b", true), ResultOK),
	expectVal(reserve(p1, 4), ResultOK, 1),
}

func with(steps ...step) []step { return append(append([]step(nil), twoStreams...), steps...) }

func TestObjectScenarios(t *testing.T) {
	runScenarios(t, []scenario{
		{"commit advances two streams atomically", with(
			expectVal(commit(p1, obj(1, rg(1, 1, 0, 10), rg(2, 1, 0, 5))), ResultOK, 1),
			expectCode(commit(p1, obj(1, rg(1, 1, 0, 10), rg(2, 1, 0, 5))), ResultRedundant),
			inspect(func(t *testing.T, s *State) {
				wantIndex(t, s, 1, 0, 10, map[uint64]uint64{0: 1})
				wantIndex(t, s, 2, 0, 5, map[uint64]uint64{0: 1})
				if o, _ := s.Object(1); o == nil || o.Live != 2 || o.Size != 10 || o.CommittedMs != 5 {
					t.Errorf("object 1 = %+v", o)
				}
				if _, ok := s.Reservation(1); ok {
					t.Error("object 1 still reserved")
				}
				if _, ok := s.Reservation(2); !ok {
					t.Error("object 2 no longer reserved")
				}
				wantObjectAt(t, s, 1, 9, 1)
				wantObjectAt(t, s, 1, 10, 0)
			}),
			expectVal(commit(p1, obj(2, rg(1, 1, 10, 12)), obj(3, rg(1, 1, 12, 20), rg(2, 1, 5, 6))), ResultOK, 2),
			inspect(func(t *testing.T, s *State) {
				wantIndex(t, s, 1, 0, 20, map[uint64]uint64{0: 1, 10: 2, 12: 3})
				wantObjectAt(t, s, 1, 12, 3)
			}),
		)},
		{"gaps and bad ranges are rejected", with(
			expectCode(commit(p1, obj(1, rg(1, 1, 0, 10))), ResultOK),
			expectCode(commit(p1, obj(2, rg(1, 1, 11, 20))), ResultGap),
			expectCode(commit(p1, obj(2, rg(1, 1, 5, 15))), ResultGap), // overlap
			expectCode(commit(p1, obj(2, rg(1, 1, 0, 10))), ResultGap),
			expectCode(commit(p1, obj(2, rg(1, 1, 10, 20)), obj(3, rg(2, 1, 1, 4))), ResultGap),
			expectCode(commit(p1, obj(2, rg(1, 2, 10, 20))), ResultStaleEpoch),
			expectCode(commit(p2, obj(2, rg(1, 1, 10, 20))), ResultInvalid), // reserved by node 1
			expectCode(commit(p1, obj(2, rg(1, 1, 10, 10))), ResultInvalid),
			expectCode(commit(p1, obj(2, rg(1, 1, 10, 12), rg(1, 1, 12, 14))), ResultInvalid),
			expectCode(commit(p1, obj(9, rg(1, 1, 10, 12))), ResultInvalid),
			expectCode(commit(p1, obj(2)), ResultInvalid),
			expectCode(commit(p1), ResultInvalid),
			inspect(func(t *testing.T, s *State) {
				wantIndex(t, s, 1, 0, 10, map[uint64]uint64{0: 1})
				wantIndex(t, s, 2, 0, 0, nil)
			}),
		)},
		{"commit to a deleted stream sends the object to garbage", with(
			expectCode(&DeleteStream{By: p1, Stream: 2, Epoch: 1}, ResultOK),
			expectCode(commit(p1, obj(1, rg(2, 1, 0, 5))), ResultOK),
			expectCode(commit(p1, obj(2, rg(1, 1, 0, 4), rg(2, 1, 5, 9))), ResultOK),
			inspect(func(t *testing.T, s *State) {
				wantGarbage(t, s, map[uint64]GarbageReason{1: GarbageDeleted})
				if _, ok := s.Object(1); ok {
					t.Error("object 1 committed")
				}
				if o, _ := s.Object(2); o == nil || o.Live != 1 {
					t.Errorf("object 2 = %+v", o)
				}
			}),
		)},
		{"trim marks objects wholly below the start", with(
			expectCode(commit(p1, obj(1, rg(1, 1, 0, 10), rg(2, 1, 0, 10)), obj(2, rg(1, 1, 10, 20)), obj(3, rg(1, 1, 20, 30))), ResultOK),
			expectVal(&TrimStream{By: p1, Stream: 1, Epoch: 1, Start: 15}, ResultOK, 15),
			inspect(func(t *testing.T, s *State) {
				wantIndex(t, s, 1, 15, 30, map[uint64]uint64{10: 2, 20: 3})
				wantGarbage(t, s, nil) // object 1 still holds stream 2
				if o, _ := s.Object(1); o == nil || o.Live != 1 {
					t.Errorf("object 1 = %+v", o)
				}
				wantObjectAt(t, s, 1, 14, 0)
				wantObjectAt(t, s, 1, 15, 2)
			}),
			expectCode(&TrimStream{By: p1, Stream: 1, Epoch: 1, Start: 10}, ResultRedundant),
			expectCode(&TrimStream{By: p1, Stream: 1, Epoch: 1, Start: 31}, ResultInvalid),
			expectCode(&TrimStream{By: p1, Stream: 1, Epoch: 0, Start: 20}, ResultStaleEpoch),
			expectCode(&TrimStream{By: p1, Stream: 2, Epoch: 1, Start: 10, KeepLast: true}, ResultOK),
			expectCode(&TrimStream{By: p1, Stream: 1, Epoch: 1, Start: 30, KeepLast: true}, ResultOK),
			inspect(func(t *testing.T, s *State) {
				// Trimmed to empty with KeepLast, each stream keeps its
				// last object (its section holds the producer state),
				// unreadable.
				wantIndex(t, s, 1, 30, 30, map[uint64]uint64{20: 3})
				wantGarbage(t, s, map[uint64]GarbageReason{2: GarbageTrimmed})
				wantObjectAt(t, s, 1, 29, 0)
				if o, ok := s.LastObject(stream(t, s, 2)); !ok || o.ID != 1 {
					t.Errorf("stream 2's last object = %+v", o)
				}
			}),
			expectCode(commit(p1, obj(4, rg(1, 1, 30, 31))), ResultOK),
			expectCode(&TrimStream{By: p1, Stream: 1, Epoch: 1, Start: 31}, ResultOK),
			inspect(func(t *testing.T, s *State) {
				// Without KeepLast, the last object goes too.
				wantIndex(t, s, 1, 31, 31, nil)
				wantGarbage(t, s, map[uint64]GarbageReason{2: GarbageTrimmed, 3: GarbageTrimmed, 4: GarbageTrimmed})
			}),
		)},
		{"delete marks all objects and frees the name", with(
			expectCode(commit(p1, obj(1, rg(1, 1, 0, 5), rg(2, 1, 0, 5)), obj(2, rg(1, 1, 5, 9))), ResultOK),
			expectCode(&DeleteStream{By: p1, Stream: 1, Epoch: 1}, ResultOK),
			inspect(func(t *testing.T, s *State) {
				wantGarbage(t, s, map[uint64]GarbageReason{2: GarbageDeleted})
				if o, _ := s.Object(1); o == nil || o.Live != 1 {
					t.Errorf("object 1 = %+v", o)
				}
			}),
			expectVal(create(p2, "/a", true), ResultOK, 3),
			expectCode(&DeleteStream{By: p1, Stream: 2, Epoch: 1}, ResultOK),
			inspect(func(t *testing.T, s *State) {
				wantGarbage(t, s, map[uint64]GarbageReason{1: GarbageDeleted, 2: GarbageDeleted})
			}),
		)},
		{"compaction replaces tiled objects", with(
			expectVal(reserve(p1, 2), ResultOK, 5),
			expectCode(commit(p1, obj(1, rg(1, 1, 0, 10)), obj(2, rg(1, 1, 10, 20), rg(2, 1, 0, 3)), obj(3, rg(1, 1, 20, 30))), ResultOK),
			expectCode(compact(p1, obj(4, rg(1, 1, 0, 30)), 3), ResultInvalid),
			expectCode(compact(p1, obj(4, rg(1, 1, 0, 30)), 1, 2), ResultInvalid),
			expectCode(compact(p1, obj(4, rg(1, 1, 0, 20)), 1, 1), ResultInvalid),
			expectCode(compact(p1, obj(4, rg(1, 2, 0, 20)), 1, 2), ResultStaleEpoch),
			expectCode(compact(p2, obj(4, rg(1, 1, 0, 20)), 1, 2), ResultInvalid), // not its reservation
			expectCode(compact(p1, obj(4, rg(1, 1, 0, 20))), ResultInvalid),
			expectVal(compact(p1, obj(4, rg(1, 1, 0, 20)), 2, 1), ResultOK, 4),
			expectCode(compact(p1, obj(4, rg(1, 1, 0, 20)), 2, 1), ResultRedundant),
			inspect(func(t *testing.T, s *State) {
				wantIndex(t, s, 1, 0, 30, map[uint64]uint64{0: 4, 20: 3})
				wantGarbage(t, s, map[uint64]GarbageReason{1: GarbageCompacted})
				if o, _ := s.Object(2); o == nil || o.Live != 1 {
					t.Errorf("object 2 (still holding stream 2) = %+v", o)
				}
				wantObjectAt(t, s, 1, 15, 4)
			}),
			expectCode(compact(p1, obj(5, rg(1, 1, 0, 30)), 1, 3), ResultInvalid),
			expectCode(compact(p1, obj(5, rg(1, 1, 0, 30)), 3, 4), ResultOK),
			inspect(func(t *testing.T, s *State) {
				wantIndex(t, s, 1, 0, 30, map[uint64]uint64{0: 5})
				wantGarbage(t, s, map[uint64]GarbageReason{1: GarbageCompacted, 3: GarbageCompacted, 4: GarbageCompacted})
			}),
		)},
		{"expire reservations, destroy garbage", []step{
			expectCode(reg(1, 1), ResultOK),
			expectCode(create(p1, "/a", true), ResultOK),
			expectVal(&ReserveObjects{By: p1, Count: 2, TTLMs: 100, NowMs: 1000}, ResultOK, 1),
			expectVal(&ReserveObjects{By: p1, Count: 1, TTLMs: 500, NowMs: 1000}, ResultOK, 3),
			expectCode(&ReserveObjects{By: p1, Count: 0, TTLMs: 1}, ResultInvalid),
			expectCode(&ReserveObjects{By: p1, Count: MaxReserve + 1, TTLMs: 1}, ResultInvalid),
			expectCode(&ReserveObjects{By: p1, Count: 1, TTLMs: -1}, ResultInvalid),
			expectVal(&ExpireReservations{By: p1, NowMs: 1099}, ResultRedundant, 0),
			expectVal(&ExpireReservations{By: p1, NowMs: 1100}, ResultOK, 2),
			inspect(func(t *testing.T, s *State) {
				wantGarbage(t, s, map[uint64]GarbageReason{1: GarbageExpired, 2: GarbageExpired})
				if _, ok := s.Reservation(3); !ok {
					t.Error("reservation 3 expired early")
				}
			}),
			expectCode(commit(p1, obj(1, rg(1, 1, 0, 5))), ResultInvalid),
			expectCode(commit(p1, obj(3, rg(1, 1, 0, 5))), ResultOK),
			expectVal(&DestroyObjects{By: p1, IDs: []uint64{1, 77, 3}}, ResultOK, 1),
			expectVal(&DestroyObjects{By: p1, IDs: []uint64{1}}, ResultRedundant, 0),
			expectVal(&DestroyObjects{By: p1, IDs: []uint64{2}}, ResultOK, 1),
			inspect(func(t *testing.T, s *State) {
				if s.GarbageCount() != 0 {
					t.Errorf("%d garbage left", s.GarbageCount())
				}
				if _, ok := s.Object(3); !ok {
					t.Error("destroy removed a committed object")
				}
			}),
		}},
	})
}
