package domain

// planner draws mostly plausible commands for its state: a registered node at
// its current epoch as proposer, existing streams at their epoch, reserved
// object ids, ranges starting at the stream's end. A fifth are fully random.
type planner struct {
	gen
	s   *State
	now int64
}

func (p *planner) nodes() []*Node {
	var ns []*Node
	p.s.Nodes(func(n *Node) bool { ns = append(ns, n); return true })
	return ns
}

// live returns the current process of a registered node (random if none).
func (p *planner) live() Proposer {
	ns := p.nodes()
	if len(ns) == 0 || p.pct(5) {
		return p.proposer()
	}
	n := ns[p.intn(len(ns))]
	return Proposer{Node: n.ID, Epoch: n.Epoch}
}

func (p *planner) liveOf(id NodeID) Proposer {
	if n, ok := p.s.Node(id); ok {
		return Proposer{Node: id, Epoch: n.Epoch}
	}
	return p.live()
}

// streams returns the streams matching keep (all when keep is nil).
func (p *planner) streams(keep func(*Stream) bool) []*Stream {
	var out []*Stream
	p.s.streams.All(func(_ uint64, st *Stream) bool {
		if keep == nil || keep(st) {
			out = append(out, st)
		}
		return true
	})
	return out
}

// stream picks a stream preferring those matching keep; nil if there is none.
func (p *planner) stream(keep func(*Stream) bool) *Stream {
	sts := p.streams(keep)
	if len(sts) == 0 || p.pct(10) {
		sts = p.streams(nil)
	}
	if len(sts) == 0 {
		return nil
	}
	return sts[p.intn(len(sts))]
}

func (p *planner) isOpen(st *Stream) bool { return p.s.IsOpen(st) }

// writer is the process that opened st (possibly a dead one).
func writer(st *Stream) Proposer { return Proposer{Node: st.Owner, Epoch: st.OwnerEpoch} }

func (p *planner) reserved(node NodeID) []uint64 {
	var ids []uint64
	p.s.reservations.All(func(id uint64, r Reservation) bool {
		if r.Node == node {
			ids = append(ids, id)
		}
		return true
	})
	return ids
}

// epochOf returns st's epoch, sometimes perturbed.
func (p *planner) epochOf(st *Stream) uint64 {
	if p.pct(15) {
		return p.epoch()
	}
	return st.Epoch
}

func (p *planner) command(c Code) Command {
	if p.pct(20) {
		return p.gen.command(c)
	}
	if cmd := p.plausible(c); cmd != nil {
		return cmd
	}
	return p.gen.command(c)
}

// plausible returns nil when the state offers nothing to aim at.
func (p *planner) plausible(c Code) Command {
	switch c {
	case CodeRegisterNode:
		return p.register()
	case CodeSetSlots:
		n := NodeID(1 + p.intn(4))
		return &SetSlots{By: p.live(), Node: n, Slots: p.slots()}
	case CodeCreateStream:
		return &CreateStream{By: p.live(), Name: p.pick(genNames[1:]), Meta: p.blob(), Open: !p.pct(30), NowMs: p.now}
	case CodePlaceStream:
		return &PlaceStream{By: p.live(), Name: p.pick(genNames[1:]), Meta: p.blob(), Content: p.pct(50), NowMs: p.now}
	case CodeCreateFork:
		src := p.stream(nil)
		if src == nil {
			return nil
		}
		return &CreateFork{By: p.live(), Name: p.pick(genNames[1:]), Meta: p.blob(), Source: src.ID,
			At: src.Start + p.u64(int(src.End-src.Start)+2), NowMs: p.now}
	case CodeReserveObjects:
		return &ReserveObjects{By: p.live(), Count: uint32(1 + p.intn(3)), TTLMs: int64(50 + p.intn(500)), NowMs: p.now}
	case CodeCommitObjects:
		return p.commit()
	case CodeCompactObjects:
		return p.compact()
	case CodeExpireReservations:
		return &ExpireReservations{By: p.live(), NowMs: p.now}
	case CodeDestroyObjects:
		return p.destroy()
	case CodePutKV, CodePutKVIf, CodeDeleteKV, CodeDeleteKVIf:
		return p.kv(c)
	case CodeFenceNode:
		id := NodeID(1 + p.intn(4))
		if n, known := p.s.Node(id); known && !p.pct(20) {
			return &FenceNode{By: p.live(), Node: id, Epoch: n.Epoch}
		}
		return nil
	}
	return p.streamCommand(c)
}

func (p *planner) register() Command {
	id := NodeID(1 + p.intn(4))
	old, known := p.s.Node(id)
	c := &RegisterNode{Node: id, Epoch: p.epoch(), Address: p.pick(genAddrs), Slots: 1 + p.slots(), NowMs: p.now}
	switch {
	case !known:
	case p.pct(30):
		c.Epoch = old.Epoch + 1 // a restart: closes the node's streams
	case !p.pct(30):
		c.Epoch, c.Address, c.Slots = old.Epoch, old.Address, old.Slots // redundant
	}
	return c
}

func (p *planner) streamCommand(c Code) Command {
	open := func(st *Stream) bool { return p.isOpen(st) }
	switch c {
	case CodeOpenStream:
		st := p.stream(func(st *Stream) bool { return !p.isOpen(st) })
		if st == nil {
			return nil
		}
		by := p.live()
		if st.TransferTo != 0 && !p.pct(30) {
			by = p.liveOf(st.TransferTo)
		}
		e := st.Epoch + 1
		if p.pct(15) {
			e = p.epoch()
		}
		return &OpenStream{By: by, Stream: st.ID, Epoch: e}
	case CodeStartTransfer:
		if st := p.stream(nil); st != nil {
			return &StartTransfer{By: p.live(), Stream: st.ID, To: p.live().Node}
		}
		return nil
	case CodeCompleteTransfer:
		st := p.stream(func(st *Stream) bool { return st.TransferTo != 0 })
		if st == nil {
			return nil
		}
		return &CompleteTransfer{By: p.live(), Stream: st.ID, Epoch: p.epochOf(st)}
	}
	st := p.stream(open)
	if st == nil {
		return nil
	}
	by := writer(st)
	if p.pct(15) {
		by = p.live()
	}
	switch c {
	case CodeCloseStream:
		return &CloseStream{By: by, Stream: st.ID, Epoch: p.epochOf(st)}
	case CodeSealStream:
		return &SealStream{By: by, Stream: st.ID, Epoch: p.epochOf(st)}
	case CodeSealStreamBy:
		return &SealStreamBy{By: by, Stream: st.ID, Epoch: p.epochOf(st), Closer: p.stamp()}
	case CodeRecoveredStream:
		return &RecoveredStream{By: by, Stream: st.ID, Epoch: p.epochOf(st)}
	case CodeSetStreamMeta:
		return &SetStreamMeta{By: by, Stream: st.ID, Epoch: p.epochOf(st), Meta: p.blob()}
	case CodeTrimStream:
		return &TrimStream{By: by, Stream: st.ID, Epoch: p.epochOf(st), Start: st.Start + p.u64(int(st.End-st.Start)+2), KeepLast: p.pct(50)}
	case CodeDeleteStream:
		return &DeleteStream{By: by, Stream: st.ID, Epoch: p.epochOf(st)}
	}
	return nil
}

// commit writes 1..2 objects of the writer of an open stream, each holding
// ranges of 1..2 of its open streams starting at their end.
func (p *planner) commit() Command {
	st := p.stream(func(st *Stream) bool { return p.isOpen(st) })
	if st == nil {
		return nil
	}
	by := writer(st)
	mine := p.streams(func(o *Stream) bool { return p.s.isWriter(o, by) })
	if len(mine) == 0 {
		mine = []*Stream{st}
	}
	ids := p.reserved(by.Node)
	if len(ids) == 0 || p.pct(5) {
		ids = append(ids, p.object())
	}
	first := p.intn(len(ids))
	ends := map[uint64]uint64{}
	c := &CommitObjects{By: by, NowMs: p.now, Objects: make([]ObjectSpec, 1+p.intn(2))}
	for i := range c.Objects {
		spec := ObjectSpec{ID: ids[(first+i)%len(ids)], Size: 1 + p.u64(1000)}
		k := p.intn(len(mine))
		for j := range min(1+p.intn(2), len(mine)) {
			o := mine[(k+j)%len(mine)]
			start, seen := ends[o.ID]
			if !seen {
				start = o.End
			}
			if p.pct(5) {
				start++ // a gap
			} else if start > 0 && p.pct(3) {
				start-- // an overlap
			}
			end := start + 1 + p.u64(10)
			ends[o.ID] = end
			spec.Ranges = append(spec.Ranges, Range{Stream: o.ID, Epoch: o.Epoch, Start: start, End: end})
		}
		if p.pct(10) {
			spec.Ranges = append(spec.Ranges, Range{Stream: 100 + p.gen.stream(), Epoch: 1, Start: 0, End: 5}) // no such stream
		}
		c.Objects[i] = spec
	}
	return c
}

// compact replaces a run of consecutive indexed objects of an open stream.
func (p *planner) compact() Command {
	st := p.stream(func(st *Stream) bool { return p.isOpen(st) && st.Objects.Len() > 0 })
	if st == nil || st.Objects.Len() == 0 {
		return nil
	}
	var ids []uint64
	st.Objects.All(func(_, id uint64) bool { ids = append(ids, id); return true })
	i := p.intn(len(ids))
	j := i + p.intn(len(ids)-i)
	first, _ := p.s.Object(ids[i])
	last, _ := p.s.Object(ids[j])
	rg := Range{Stream: st.ID, Epoch: st.Epoch, Start: rangeOf(first, st.ID).Start, End: rangeOf(last, st.ID).End}
	if p.pct(10) {
		rg.End++
	}
	by := writer(st)
	own := p.reserved(by.Node)
	id := p.object()
	if len(own) > 0 && !p.pct(10) {
		id = p.pickID(own)
	}
	replaces := append([]uint64(nil), ids[i:j+1]...)
	if len(replaces) > 1 && p.pct(50) {
		replaces[0], replaces[len(replaces)-1] = replaces[len(replaces)-1], replaces[0]
	}
	return &CompactObjects{By: by, Object: ObjectSpec{ID: id, Size: 1 + p.u64(1000), Ranges: []Range{rg}},
		Replaces: replaces, NowMs: p.now}
}

func (p *planner) destroy() Command {
	var ids []uint64
	p.s.GarbageFrom(0, func(id uint64, _ Garbage) bool {
		if !p.pct(40) {
			ids = append(ids, id)
		}
		return len(ids) < 4
	})
	if p.pct(20) {
		ids = append(ids, p.object())
	}
	return &DestroyObjects{By: p.live(), IDs: ids}
}

func (p *planner) kv(c Code) Command {
	by, space, key := p.live(), KVSpace(1+p.intn(2)), p.pick(genKeys[1:])
	if p.pct(10) {
		space, key = p.space(), p.pick(genKeys)
	}
	rev := p.u64(12)
	if e, ok := p.s.KV(space, key); ok && !p.pct(30) {
		rev = e.Rev
	} else if p.pct(50) {
		rev = 0
	}
	switch c {
	case CodePutKV:
		return &PutKV{By: by, Space: space, Key: key, Value: p.blob()}
	case CodePutKVIf:
		return &PutKVIf{By: by, Space: space, Key: key, Value: p.blob(), IfRev: rev}
	case CodeDeleteKV:
		return &DeleteKV{By: by, Space: space, Key: key}
	}
	return &DeleteKVIf{By: by, Space: space, Key: key, IfRev: rev}
}
