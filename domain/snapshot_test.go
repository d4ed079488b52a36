package domain

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// richState is a state reached by a long plausible log: the first seed
// whose state has entries in every map (deterministic, and robust to new
// command types changing what one seed produces).
func richState(t *testing.T) State {
	t.Helper()
	for seed := uint64(1); seed <= 64; seed++ {
		_, _, s := genLog(newPRNG(seed), 60, true)
		if s.StreamCount() > 0 && hasUnrecovered(&s) && s.objects.Len() > 0 && s.reservations.Len() > 0 && s.garbage.Len() > 0 && s.kv.Len() > 0 {
			return s
		}
	}
	t.Fatal("no seed gives a state with every kind of entry")
	return State{}
}

func hasUnrecovered(s *State) bool {
	found := false
	s.streams.All(func(_ uint64, st *Stream) bool { found = len(st.Unrecovered) > 0; return !found })
	return found
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := richState(t)
	enc := EncodeState(&s)
	got, err := DecodeState(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(EncodeState(&got), enc) || got.Hash() != s.Hash() {
		t.Fatal("decoded state encodes differently")
	}
	// The O(n) builder must give the trees successive Sets gave.
	if !sameShape(got.nodes.root, s.nodes.root) || !sameShape(got.streams.root, s.streams.root) ||
		!sameShape(got.names.root, s.names.root) || !sameShape(got.objects.root, s.objects.root) ||
		!sameShape(got.reservations.root, s.reservations.root) || !sameShape(got.garbage.root, s.garbage.root) ||
		!sameShape(got.kv.root, s.kv.root) {
		t.Fatal("decoded maps differ from the originals")
	}
	if !bytes.Equal(EncodeState(&s), enc) {
		t.Fatal("encoding modified the state")
	}
}

func TestDecodeStateRejectsTruncation(t *testing.T) {
	s := richState(t)
	enc := EncodeState(&s)
	for n := range len(enc) {
		if _, err := DecodeState(enc[:n]); !errors.Is(err, ErrDecode) {
			t.Fatalf("prefix of %d/%d bytes: %v", n, len(enc), err)
		}
	}
	if _, err := DecodeState(append(enc, 0)); !errors.Is(err, ErrDecode) {
		t.Fatalf("trailing byte accepted: %v", err)
	}
	bad := append([]byte{SnapshotVersion + 1}, enc[1:]...)
	if _, err := DecodeState(bad); !errors.Is(err, ErrDecode) {
		t.Fatalf("version %d accepted: %v", bad[0], err)
	}
}

func TestDecodeStateRejectsUnorderedKeys(t *testing.T) {
	// Header (index, applied, next stream, next object), then two nodes out
	// of order: id, epoch, address, slots, assigned, left.
	b := []byte{SnapshotVersion, 0, 0, 1, 1, 2, 2, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	if _, err := DecodeState(b); !errors.Is(err, ErrDecode) {
		t.Fatalf("unordered nodes accepted: %v", err)
	}
	b[6], b[12] = 1, 2 // ordered: now valid
	if _, err := DecodeState(b); err != nil {
		t.Fatalf("ordered nodes rejected: %v", err)
	}
}

// TestInvariantViolations breaks one relation at a time in a valid state;
// CheckInvariants and DecodeState must both refuse the result.
func TestInvariantViolations(t *testing.T) {
	base := NewState()
	run(t, &base, with(
		expectCode(commit(p1, obj(1, rg(1, 1, 0, 10), rg(2, 1, 0, 4))), ResultOK),
		expectCode(&ExpireReservations{By: p1, NowMs: 5000}, ResultOK),
		expectCode(&PutKV{By: p1, Space: SpaceTokens, Key: "k"}, ResultOK),
	))
	editStream := func(id uint64, fn func(*Stream)) func(*State) {
		return func(s *State) {
			st := *stream(t, s, id)
			fn(&st)
			s.putStream(&st)
		}
	}
	tests := []struct {
		name  string
		spoil func(*State)
	}{
		{"duplicate name", editStream(2, func(st *Stream) { st.Name = "/a" })},
		{"assigned count", func(s *State) {
			n := *must(s.Node(1))
			n.Assigned++
			s.nodes = s.nodes.Set(1, &n)
		}},
		{"unregistered owner", editStream(1, func(st *Stream) { st.Owner = 9 })},
		{"open without epoch", editStream(1, func(st *Stream) { st.Epoch = 0 })},
		{"transfer to unknown node", editStream(1, func(st *Stream) { st.TransferTo = 9 })},
		{"writer listed as unrecovered", editStream(1, func(st *Stream) {
			st.Unrecovered = []Proposer{{Node: st.Owner, Epoch: st.OwnerEpoch}}
		})},
		{"unrecovered writer listed twice", editStream(1, func(st *Stream) {
			st.Unrecovered = []Proposer{{Node: 7, Epoch: 1}, {Node: 7, Epoch: 1}}
		})},
		{"unrecovered writer without a node", editStream(1, func(st *Stream) { st.Unrecovered = []Proposer{{Epoch: 1}} })},
		{"closer of an unsealed stream", editStream(1, func(st *Stream) { st.Closer = Closer{Known: true} })},
		{"start past end", editStream(1, func(st *Stream) { st.Start = 11 })},
		{"end past objects", editStream(1, func(st *Stream) { st.End = 12 })},
		{"offsets without objects", editStream(1, func(st *Stream) { st.Objects = pmap[uint64, uint64]{} })},
		{"index of unknown object", editStream(1, func(st *Stream) { st.Objects = st.Objects.Set(10, 77) })},
		{"live count", func(s *State) {
			o := *must(s.Object(1))
			o.Live = 1
			s.objects = s.objects.Set(1, &o)
		}},
		{"committed and garbage", func(s *State) { s.garbage = s.garbage.Set(1, Garbage{Reason: GarbageTrimmed}) }},
		{"committed and reserved", func(s *State) { s.reservations = s.reservations.Set(1, Reservation{Node: 1}) }},
		{"reserved and garbage", func(s *State) { s.reservations = s.reservations.Set(2, Reservation{Node: 1}) }},
		{"stream id not below next", func(s *State) { s.NextStreamID = 2 }},
		{"object id not below next", func(s *State) { s.NextObjectID = 4 }},
		{"revision above applied", func(s *State) { s.kv = s.kv.Set(kvKey(SpaceTokens, "x"), KVEntry{Rev: s.Applied + 1}) }},
		{"key without space", func(s *State) { s.kv = s.kv.Set("\x07x", KVEntry{}) }},
		{"applied counter out of range", func(s *State) { s.Applied = maxCounter }},
		{"next object out of range", func(s *State) { s.NextObjectID = maxCounter }},
	}
	if err := base.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.spoil(&s)
			if err := s.CheckInvariants(); err == nil {
				t.Error("CheckInvariants accepted the broken state")
			}
			if _, err := DecodeState(EncodeState(&s)); !errors.Is(err, ErrDecode) {
				t.Errorf("DecodeState accepted the broken state: %v", err)
			}
			if err := base.CheckInvariants(); err != nil {
				t.Fatalf("breaking a copy changed the base: %v", err)
			}
		})
	}
}

// TestIndexViolations breaks one stream index at a time: CheckInvariants
// must refuse the result, and DecodeState, which derives the indexes, must
// rebuild them right.
func TestIndexViolations(t *testing.T) {
	base := NewState()
	expiring := EncodeStreamConfig(StreamConfig{ContentType: "text/plain", IdleTTLSec: 60})
	run(t, &base, with(
		expectCode(&CreateStream{By: p1, Name: "/idle", Meta: expiring, Open: true}, ResultOK),
		expectCode(&CreateStream{By: p1, Name: "/plain", Open: true}, ResultOK),
	))
	if got := streamIDs(base.ExpiringStreams); !slices.Equal(got, []uint64{3}) { // after twoStreams
		t.Fatalf("expiring streams %v, want [3]", got)
	}
	named := map[Proposer]uint32{}
	base.NamedWALs(func(p Proposer, n uint32) bool { named[p] = n; return true })
	if want := map[Proposer]uint32{p1: 4}; !maps.Equal(named, want) {
		t.Fatalf("named WALs %v, want %v", named, want)
	}
	owned := 0
	base.StreamsOf(p1, func(*Stream) bool { owned++; return true })
	if got := base.OpenStreamsOf(p1); got != owned || owned == 0 {
		t.Fatalf("OpenStreamsOf %d, StreamsOf visits %d", got, owned)
	}
	tests := []struct {
		name  string
		spoil func(*State)
	}{
		{"expiring stream missing", func(s *State) { s.expiring = s.expiring.Delete(3) }},
		{"stream that cannot expire listed", func(s *State) { s.expiring = s.expiring.Set(4, struct{}{}) }},
		{"unknown stream listed", func(s *State) { s.expiring = s.expiring.Set(9, struct{}{}) }},
		{"WAL count", func(s *State) { s.wals = countWAL(s.wals, p1, false, -1) }},
		{"open count", func(s *State) { s.wals = countWAL(countWAL(s.wals, p1, true, -1), p1, false, +1) }},
		{"WAL nobody names", func(s *State) { s.wals = countWAL(s.wals, Proposer{Node: 2, Epoch: 1}, true, +1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.spoil(&s)
			if err := s.CheckInvariants(); err == nil {
				t.Error("CheckInvariants accepted the broken index")
			}
			decoded, err := DecodeState(EncodeState(&s))
			if err != nil {
				t.Fatalf("DecodeState did not rebuild the index: %v", err)
			}
			if !reflect.DeepEqual(decoded, base) {
				t.Error("DecodeState rebuilt another state")
			}
		})
	}
}

func streamIDs(each func(func(*Stream) bool)) []uint64 {
	var ids []uint64
	each(func(st *Stream) bool { ids = append(ids, st.ID); return true })
	return ids
}

func must[V any](v V, ok bool) V {
	if !ok {
		panic("missing")
	}
	return v
}
