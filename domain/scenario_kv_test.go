package domain

import (
	"slices"
	"testing"
)

func TestKVScenario(t *testing.T) {
	reg, tok := SpaceRegistry, SpaceTokens
	put := func(sp KVSpace, k, v string) *PutKV { return &PutKV{By: p1, Space: sp, Key: k, Value: []byte(v)} }
	putIf := func(k, v string, rev uint64) *PutKVIf {
		return &PutKVIf{By: p1, Space: reg, Key: k, Value: []byte(v), IfRev: rev}
	}
	delIf := func(k string, rev uint64) *DeleteKVIf { return &DeleteKVIf{By: p1, Space: reg, Key: k, IfRev: rev} }
	// Revisions are State.Applied after the write: the step number, from 1.
	runScenarios(t, []scenario{{"conditional writes", []step{
		expectCode(&RegisterNode{Node: 1, Epoch: 1}, ResultOK), // applied 1
		expectVal(putIf("k", "v1", 0), ResultOK, 2),
		expectVal(putIf("k", "v2", 0), ResultRevMismatch, 2),
		expectVal(putIf("k", "v2", 2), ResultOK, 4),
		expectVal(putIf("k", "v3", 2), ResultRevMismatch, 4),
		expectVal(put(reg, "k", "v3"), ResultOK, 6),
		expectVal(put(tok, "k", "t"), ResultOK, 7),
		expectVal(delIf("k", 4), ResultRevMismatch, 6),
		expectCode(delIf("missing", 1), ResultNotFound),
		expectCode(&DeleteKV{By: p1, Space: reg, Key: "missing"}, ResultRedundant),
		expectVal(putIf("missing", "x", 3), ResultRevMismatch, 0),
		expectVal(delIf("k", 6), ResultOK, 6),
		expectVal(put(reg, "b", "2"), ResultOK, 13),
		expectVal(put(reg, "a", "1"), ResultOK, 14),
		expectVal(&DeleteKV{By: p1, Space: reg, Key: "b"}, ResultOK, 13),
		expectVal(put(reg, "b", ""), ResultOK, 16),
		expectCode(put(0, "k", "x"), ResultInvalid),
		expectCode(put(3, "k", "x"), ResultInvalid),
		expectCode(put(reg, "", "x"), ResultInvalid),
		expectCode(put(reg, string(make([]byte, MaxKeyLen+1)), "x"), ResultInvalid),
		expectCode(&PutKV{By: p1, Space: reg, Key: "big", Value: make([]byte, MaxValueLen+1)}, ResultInvalid),
		inspect(func(t *testing.T, s *State) {
			if _, ok := s.KV(reg, "k"); ok {
				t.Error("deleted key still present")
			}
			if e, ok := s.KV(tok, "k"); !ok || string(e.Value) != "t" || e.Rev != 7 {
				t.Errorf("tokens/k = %+v %v", e, ok)
			}
			var keys []string
			s.KVFrom(reg, "", func(k string, e KVEntry) bool { keys = append(keys, k); return true })
			if !slices.Equal(keys, []string{"a", "b"}) {
				t.Errorf("registry keys %q, want [a b]", keys)
			}
			keys = nil
			s.KVFrom(reg, "b", func(k string, e KVEntry) bool { keys = append(keys, k); return true })
			if !slices.Equal(keys, []string{"b"}) {
				t.Errorf("registry keys from b %q, want [b]", keys)
			}
		}),
	}}})
}

func TestPlace(t *testing.T) {
	const max = ^uint32(0)
	tests := []struct {
		name  string
		nodes []Node // ID, Slots, Assigned
		want  NodeID // 0: none
	}{
		{"no nodes", nil, 0},
		{"all without slots", []Node{{ID: 1}, {ID: 2, Assigned: 3}}, 0},
		{"empty tie goes to the lowest id", []Node{{ID: 2, Slots: 4}, {ID: 1, Slots: 2}}, 1},
		{"lowest ratio", []Node{{ID: 1, Slots: 2, Assigned: 1}, {ID: 2, Slots: 4}}, 2},
		{"ratio, not count", []Node{{ID: 1, Slots: 2, Assigned: 1}, {ID: 2, Slots: 4, Assigned: 1}}, 2},
		{"equal ratios tie to the lowest id", []Node{{ID: 1, Slots: 2, Assigned: 1}, {ID: 2, Slots: 4, Assigned: 2}}, 1},
		{"slots 0 skipped", []Node{{ID: 1}, {ID: 2, Slots: 1, Assigned: 5}}, 2},
		{"three-way tie", []Node{{ID: 7, Slots: 2, Assigned: 2}, {ID: 3, Slots: 3, Assigned: 3}, {ID: 5, Slots: 1, Assigned: 1}}, 3},
		{"fractions", []Node{{ID: 1, Slots: 1, Assigned: 10}, {ID: 2, Slots: 1000, Assigned: 999}}, 2},
		{"no overflow", []Node{{ID: 1, Slots: max, Assigned: max}, {ID: 2, Slots: max, Assigned: max - 1}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			for _, n := range tc.nodes {
				s.nodes = s.nodes.Set(uint32(n.ID), &n)
			}
			got, ok := s.Place()
			if got != tc.want || ok != (tc.want != 0) {
				t.Errorf("Place() = %d, %v; want %d", got, ok, tc.want)
			}
		})
	}
}

// TestPlaceFollowsApply checks placement against assignments made by Apply.
func TestPlaceFollowsApply(t *testing.T) {
	placed := func(want NodeID) step {
		return inspect(func(t *testing.T, s *State) {
			if got, _ := s.Place(); got != want {
				t.Errorf("Place() = %d, want %d", got, want)
			}
		})
	}
	runScenarios(t, []scenario{{"placement", []step{
		expectCode(&RegisterNode{Node: 1, Epoch: 1, Slots: 1}, ResultOK),
		expectCode(&RegisterNode{Node: 2, Epoch: 1, Slots: 2}, ResultOK),
		placed(1),
		expectCode(create(p1, "/a", true), ResultOK),
		placed(2),
		expectCode(create(p2, "/b", true), ResultOK),
		placed(2),
		expectCode(create(p2, "/c", true), ResultOK),
		placed(1),
		expectCode(&SetSlots{By: p1, Node: 1, Slots: 0}, ResultOK),
		placed(2),
		expectCode(&DeleteStream{By: p2, Stream: 3, Epoch: 1}, ResultOK),
		placed(2),
	}}})
}

func TestResultStrings(t *testing.T) {
	for code, want := range map[ResultCode]string{ResultOK: "ok", ResultNodeFenced: "node-fenced",
		ResultRevMismatch: "rev-mismatch", ResultGap: "gap", ResultGap + 1: "result(11)"} {
		if got := code.String(); got != want {
			t.Errorf("ResultCode(%d) = %q, want %q", code, got, want)
		}
	}
	// An operator reads these in errors and logs: no internal codes or values.
	for r, want := range map[Result]string{{Code: ResultOK, Value: 3}: "ok", {Code: ResultNodeFenced}: "node fenced",
		{Code: ResultGap, Value: 7, Reason: "hole"}: "hole"} {
		if got := r.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", r, got, want)
		}
	}
	for code := ResultOK; code <= ResultGap; code++ {
		if got, want := (Result{Code: code}).OK(), code == ResultOK || code == ResultRedundant; got != want {
			t.Errorf("Result{%v}.OK() = %v", code, got)
		}
	}
}
