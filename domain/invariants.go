package domain

import (
	"fmt"
	"slices"
)

// CheckInvariants verifies the relations every reachable state keeps. Tests
// call it after every Apply; snapshot decoding calls it before a state is
// used. It returns the first violation found.
func (s *State) CheckInvariants() error {
	for _, check := range []func() error{s.checkNodes, s.checkStreams, s.checkObjects, s.checkIDs, s.checkIndexes} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s *State) checkNodes() error {
	assigned := map[NodeID]uint32{}
	var err error
	s.streams.All(func(_ uint64, st *Stream) bool {
		if st.Owner != 0 {
			assigned[st.Owner]++
		}
		return true
	})
	s.nodes.All(func(id uint32, n *Node) bool {
		switch {
		case NodeID(id) != n.ID || id == 0:
			err = fmt.Errorf("node key %d holds node %d", id, n.ID)
		case n.Assigned != assigned[n.ID]:
			err = fmt.Errorf("node %d counts %d assigned streams, has %d", id, n.Assigned, assigned[n.ID])
		}
		return err == nil
	})
	return err
}

func (s *State) checkStreams() error {
	if s.names.Len() != s.streams.Len() {
		return fmt.Errorf("%d names for %d streams", s.names.Len(), s.streams.Len())
	}
	var err error
	s.streams.All(func(id uint64, st *Stream) bool {
		err = s.checkStream(id, st)
		return err == nil
	})
	if err == nil {
		err = s.checkForks()
	}
	return err
}

// checkForks: every fork's source exists and counts its forks exactly; a
// soft-deleted stream is kept only for forks and is never open.
func (s *State) checkForks() error {
	forks := map[uint64]uint32{}
	var err error
	s.streams.All(func(id uint64, st *Stream) bool {
		if st.ForkOf == 0 {
			return true
		}
		if _, ok := s.Stream(st.ForkOf); !ok {
			err = fmt.Errorf("stream %d is a fork of missing stream %d", id, st.ForkOf)
		}
		forks[st.ForkOf]++
		return err == nil
	})
	s.streams.All(func(id uint64, st *Stream) bool {
		switch {
		case err != nil:
		case st.Forks != forks[id]:
			err = fmt.Errorf("stream %d counts %d forks, has %d", id, st.Forks, forks[id])
		case st.SoftDeleted && (st.Forks == 0 || st.Open):
			err = fmt.Errorf("stream %d is soft-deleted with %d forks, open=%v", id, st.Forks, st.Open)
		}
		return err == nil
	})
	return err
}

func (s *State) checkStream(id uint64, st *Stream) error {
	if nid, ok := s.names.Get(st.Name); !ok || nid != id || st.ID != id {
		return fmt.Errorf("stream %d (%q) is not indexed by its name", id, st.Name)
	}
	if st.Start > st.End {
		return fmt.Errorf("stream %d starts at %d past its end %d", id, st.Start, st.End)
	}
	if _, ok := s.Node(st.Owner); st.Owner != 0 && !ok {
		return fmt.Errorf("stream %d is owned by unregistered node %d", id, st.Owner)
	}
	if st.Open && (st.Owner == 0 || st.Epoch == 0) {
		return fmt.Errorf("stream %d is open without an owner or epoch", id)
	}
	if st.Closer.Known && !st.Sealed {
		return fmt.Errorf("stream %d names the request that sealed it but is not sealed", id)
	}
	if _, ok := s.Node(st.TransferTo); st.TransferTo != 0 && !ok {
		return fmt.Errorf("stream %d transfers to unregistered node %d", id, st.TransferTo)
	}
	if err := checkUnrecovered(st); err != nil {
		return err
	}
	return s.checkStreamRanges(st)
}

// checkUnrecovered: earlier writers are listed once each, never the
// current writer.
func checkUnrecovered(st *Stream) error {
	owner := Proposer{Node: st.Owner, Epoch: st.OwnerEpoch}
	for i, p := range st.Unrecovered {
		switch {
		case p.Node == 0:
			return fmt.Errorf("stream %d lists an unrecovered writer without a node", st.ID)
		case st.Open && p == owner:
			return fmt.Errorf("stream %d lists its writer %+v as unrecovered", st.ID, p)
		case slices.Contains(st.Unrecovered[:i], p):
			return fmt.Errorf("stream %d lists unrecovered writer %+v twice", st.ID, p)
		}
	}
	return nil
}

// checkStreamRanges: indexed ranges tile [first, End) with first <= Start.
func (s *State) checkStreamRanges(st *Stream) error {
	var err error
	first, next := true, uint64(0)
	st.Objects.All(func(start, oid uint64) bool {
		o, ok := s.Object(oid)
		r := rangeOf(o, st.ID)
		switch {
		case !ok:
			err = fmt.Errorf("stream %d indexes unknown object %d", st.ID, oid)
		case r.Start != start || r.End <= r.Start:
			err = fmt.Errorf("stream %d indexes object %d at %d, its range is [%d,%d)", st.ID, oid, start, r.Start, r.End)
		case first && start > st.Start:
			err = fmt.Errorf("stream %d starts at %d but its first object starts at %d", st.ID, st.Start, start)
		case !first && start != next:
			err = fmt.Errorf("stream %d has a hole or overlap at %d (expected %d)", st.ID, start, next)
		}
		first, next = false, r.End
		return err == nil
	})
	if err == nil && !first && next != st.End {
		err = fmt.Errorf("stream %d ends at %d but its objects end at %d", st.ID, st.End, next)
	}
	if err == nil && first && st.Start != st.End {
		err = fmt.Errorf("stream %d has offsets [%d,%d) but no objects", st.ID, st.Start, st.End)
	}
	return err
}

func (s *State) checkObjects() error {
	live := map[uint64]uint32{}
	s.streams.All(func(_ uint64, st *Stream) bool {
		st.Objects.All(func(_, oid uint64) bool { live[oid]++; return true })
		return true
	})
	var err error
	s.objects.All(func(id uint64, o *Object) bool {
		switch {
		case o.ID != id:
			err = fmt.Errorf("object key %d holds object %d", id, o.ID)
		case o.Live == 0 || o.Live != live[id]:
			err = fmt.Errorf("object %d counts %d live ranges, %d are indexed", id, o.Live, live[id])
		}
		if _, g := s.garbage.Get(id); err == nil && g {
			err = fmt.Errorf("object %d is both committed and garbage", id)
		}
		if _, r := s.reservations.Get(id); err == nil && r {
			err = fmt.Errorf("object %d is both committed and reserved", id)
		}
		return err == nil
	})
	return err
}

// maxCounter bounds the counters of a valid state: far beyond any reachable
// value, it keeps Apply from wrapping them on a crafted snapshot.
const maxCounter = 1 << 63

func (s *State) checkIDs() error {
	if s.Applied >= maxCounter || s.NextStreamID >= maxCounter || s.NextObjectID >= maxCounter ||
		s.NextStreamID == 0 || s.NextObjectID == 0 { // id 0 is reserved (ForkOf 0: no source)
		return fmt.Errorf("counters out of range: applied %d, next stream %d, next object %d",
			s.Applied, s.NextStreamID, s.NextObjectID)
	}
	var err error
	s.streams.All(func(id uint64, _ *Stream) bool {
		switch {
		case id == 0:
			err = fmt.Errorf("stream id 0 is reserved")
		case id >= s.NextStreamID:
			err = fmt.Errorf("stream id %d >= next id %d", id, s.NextStreamID)
		}
		return err == nil
	})
	below := func(what string) func(uint64) bool {
		return func(id uint64) bool {
			if id >= s.NextObjectID {
				err = fmt.Errorf("%s id %d >= next object id %d", what, id, s.NextObjectID)
			}
			return err == nil
		}
	}
	objectsBelow, reservedBelow, garbageBelow := below("object"), below("reserved"), below("garbage")
	s.objects.All(func(id uint64, _ *Object) bool { return objectsBelow(id) })
	s.reservations.All(func(id uint64, _ Reservation) bool {
		if _, g := s.garbage.Get(id); err == nil && g {
			err = fmt.Errorf("object %d is both reserved and garbage", id)
		}
		return err == nil && reservedBelow(id)
	})
	s.garbage.All(func(id uint64, _ Garbage) bool { return err == nil && garbageBelow(id) })
	s.kv.All(func(k string, e KVEntry) bool {
		switch {
		case len(k) < 2 || (KVSpace(k[0]) != SpaceRegistry && KVSpace(k[0]) != SpaceTokens):
			err = fmt.Errorf("key %q has no valid space", k)
		case e.Rev > s.Applied:
			err = fmt.Errorf("key %q has revision %d above applied %d", k, e.Rev, s.Applied)
		}
		return err == nil
	})
	return err
}
