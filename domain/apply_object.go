package domain

import "slices"

func (s *State) reserveObjects(c *ReserveObjects) Result {
	if c.Count == 0 || c.Count > MaxReserve || c.TTLMs < 0 {
		return reject(ResultInvalid, "reserve 1..%d ids with a non-negative ttl", MaxReserve)
	}
	first := s.NextObjectID
	deadline := c.NowMs + c.TTLMs
	for i := uint64(0); i < uint64(c.Count); i++ {
		s.reservations = s.reservations.Set(first+i, Reservation{Node: c.By.Node, DeadlineMs: deadline})
	}
	s.NextObjectID += uint64(c.Count)
	return ok(first)
}

func (s *State) commitObjects(c *CommitObjects) Result {
	if len(c.Objects) == 0 || len(c.Objects) > MaxCommitBatch {
		return reject(ResultInvalid, "commit 1..%d objects", MaxCommitBatch)
	}
	if s.allCommitted(c.Objects) {
		return redundant(uint64(len(c.Objects)))
	}
	for i := range c.Objects {
		if r := s.commitObject(&c.Objects[i], c.By, c.NowMs); r.Code != ResultOK {
			return r // Apply discards the partial work
		}
	}
	return ok(uint64(len(c.Objects)))
}

func (s *State) allCommitted(objs []ObjectSpec) bool {
	for i := range objs {
		if _, known := s.Object(objs[i].ID); !known {
			return false
		}
	}
	return true
}

func (s *State) commitObject(spec *ObjectSpec, by Proposer, nowMs int64) Result {
	if r := s.checkNewObject(spec, by); r.Code != ResultOK {
		return r
	}
	var live uint32
	for _, rg := range spec.Ranges {
		old, found := s.Stream(rg.Stream)
		if !found {
			continue // deleted while the object was uploading: its range is garbage
		}
		if !s.isWriter(old, by) || old.Epoch != rg.Epoch {
			return reject(ResultStaleEpoch, "node %d is not the writer of stream %d at epoch %d", by.Node, rg.Stream, rg.Epoch)
		}
		if rg.Start != old.End {
			return reject(ResultGap, "range of stream %d starts at %d, stream ends at %d", rg.Stream, rg.Start, old.End)
		}
		st := *old
		st.End = rg.End
		st.Objects = st.Objects.Set(rg.Start, spec.ID)
		s.putStream(&st)
		live++
	}
	s.insertObject(spec, nowMs, live, GarbageDeleted)
	return ok(spec.ID)
}

// checkNewObject validates an object about to be committed: reserved by the
// proposer, not committed yet, non-empty ranges, one range per stream.
func (s *State) checkNewObject(spec *ObjectSpec, by Proposer) Result {
	if _, known := s.Object(spec.ID); known {
		return reject(ResultInvalid, "object %d is already committed", spec.ID)
	}
	if res, reserved := s.Reservation(spec.ID); !reserved || res.Node != by.Node {
		return reject(ResultInvalid, "object %d is not reserved by node %d", spec.ID, by.Node)
	}
	if len(spec.Ranges) == 0 || len(spec.Ranges) > MaxRanges {
		return reject(ResultInvalid, "object %d must hold 1..%d ranges", spec.ID, MaxRanges)
	}
	seen := make(map[uint64]bool, len(spec.Ranges))
	for _, rg := range spec.Ranges {
		if rg.Start >= rg.End || seen[rg.Stream] {
			return reject(ResultInvalid, "object %d: empty or repeated range for stream %d", spec.ID, rg.Stream)
		}
		seen[rg.Stream] = true
	}
	return ok(spec.ID)
}

// insertObject moves a reserved id into the catalog, or straight to garbage
// when none of its ranges is live.
func (s *State) insertObject(spec *ObjectSpec, nowMs int64, live uint32, reason GarbageReason) {
	s.reservations = s.reservations.Delete(spec.ID)
	if live == 0 {
		s.garbage = s.garbage.Set(spec.ID, Garbage{Reason: reason, MarkedAt: s.Applied})
		return
	}
	s.objects = s.objects.Set(spec.ID, &Object{ID: spec.ID, Size: spec.Size, CommittedMs: nowMs,
		Ranges: slices.Clone(spec.Ranges), Live: live})
}

func (s *State) compactObjects(c *CompactObjects) Result {
	spec := &c.Object
	if len(spec.Ranges) != 1 || len(c.Replaces) == 0 {
		return reject(ResultInvalid, "compaction writes one range and replaces at least one object")
	}
	rg := spec.Ranges[0]
	if st, found := s.Stream(rg.Stream); found {
		if id, indexed := st.Objects.Get(rg.Start); indexed && id == spec.ID {
			return redundant(spec.ID)
		}
	}
	if r := s.checkNewObject(spec, c.By); r.Code != ResultOK {
		return r
	}
	old, r, allowed := s.writable(rg.Stream, rg.Epoch, c.By)
	if !allowed {
		return r
	}
	if r := s.checkReplaced(old, rg, c.Replaces); r.Code != ResultOK {
		return r
	}
	st := *old
	for _, id := range c.Replaces {
		o, _ := s.Object(id)
		st.Objects = st.Objects.Delete(rangeOf(o, st.ID).Start)
		s.unref(id, GarbageCompacted)
	}
	st.Objects = st.Objects.Set(rg.Start, spec.ID)
	s.putStream(&st)
	s.insertObject(spec, c.NowMs, 1, GarbageCompacted)
	return ok(spec.ID)
}

// checkReplaced verifies that the replaced objects are indexed for st and
// their ranges tile exactly [rg.Start, rg.End).
func (s *State) checkReplaced(st *Stream, rg Range, ids []uint64) Result {
	ranges := make([]Range, 0, len(ids))
	for _, id := range ids {
		o, known := s.Object(id)
		if !known {
			return reject(ResultInvalid, "replaced object %d is not committed", id)
		}
		r := rangeOf(o, st.ID)
		if cur, indexed := st.Objects.Get(r.Start); !indexed || cur != id {
			return reject(ResultInvalid, "object %d holds no live range of stream %d", id, st.ID)
		}
		ranges = append(ranges, r)
	}
	slices.SortFunc(ranges, func(a, b Range) int { return cmpU64(a.Start, b.Start) })
	next := rg.Start
	for _, r := range ranges {
		if r.Start != next {
			return reject(ResultInvalid, "replaced ranges do not tile [%d, %d)", rg.Start, rg.End)
		}
		next = r.End
	}
	if next != rg.End {
		return reject(ResultInvalid, "replaced ranges do not tile [%d, %d)", rg.Start, rg.End)
	}
	return ok(0)
}

func (s *State) expireReservations(c *ExpireReservations) Result {
	expired := s.ExpiredReservations(c.NowMs)
	if len(expired) == 0 {
		return redundant(0)
	}
	for _, id := range expired {
		s.reservations = s.reservations.Delete(id)
		s.garbage = s.garbage.Set(id, Garbage{Reason: GarbageExpired, MarkedAt: s.Applied})
	}
	return ok(uint64(len(expired)))
}

func (s *State) destroyObjects(c *DestroyObjects) Result {
	var n uint64
	for _, id := range c.IDs {
		if _, marked := s.garbage.Get(id); marked {
			s.garbage = s.garbage.Delete(id)
			n++
		}
	}
	if n == 0 {
		return redundant(0)
	}
	return ok(n)
}

// unref drops one live range of object id; the last one turns it to garbage.
func (s *State) unref(id uint64, reason GarbageReason) {
	o, known := s.Object(id)
	if !known {
		return
	}
	if o.Live <= 1 {
		s.objects = s.objects.Delete(id)
		s.garbage = s.garbage.Set(id, Garbage{Reason: reason, MarkedAt: s.Applied})
		return
	}
	c := *o
	c.Live--
	s.objects = s.objects.Set(id, &c)
}

// rangeOf returns the range of stream held by o (zero if none).
func rangeOf(o *Object, stream uint64) Range {
	if o == nil {
		return Range{}
	}
	return o.RangeOf(stream)
}

// RangeOf returns the object's range of stream, zero if it holds none.
func (o *Object) RangeOf(stream uint64) Range {
	for _, r := range o.Ranges {
		if r.Stream == stream {
			return r
		}
	}
	return Range{}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
