package domain

// Limits Apply enforces, so a hostile or buggy proposer cannot bloat the state.
const (
	MaxNameLen     = 1024
	MaxMetaLen     = 64 << 10
	MaxKeyLen      = 1024
	MaxValueLen    = 1 << 20
	MaxReserve     = 1024
	MaxRanges      = 1 << 16
	MaxCommitBatch = 4096
)

// Apply applies one command and returns its result. It is total: it never
// panics on any decoded command and never returns an error. A command either
// takes effect entirely (ResultOK) or leaves the state as it was, apart from
// the Applied counter, which counts every command.
func (s *State) Apply(c Command) Result {
	s.Applied++
	next := *s // persistent maps make this copy O(1); it is discarded on rejection
	r := next.dispatch(c)
	if r.Code == ResultOK {
		*s = next
	}
	return r
}

// ApplyRow applies the commands of log row index in order and records index
// as the last applied row.
func (s *State) ApplyRow(index uint64, cmds []Command) []Result {
	res := make([]Result, len(cmds))
	for i, c := range cmds {
		res[i] = s.Apply(c)
	}
	s.Index = index
	return res
}

func (s *State) dispatch(c Command) Result {
	if reg, isReg := c.(*RegisterNode); isReg {
		return s.registerNode(reg)
	}
	if r, fenced := s.fence(proposerOf(c)); fenced {
		return r
	}
	switch c := c.(type) {
	case *SetSlots:
		return s.setSlots(c)
	case *CreateStream:
		return s.createStream(c)
	case *PlaceStream:
		return s.placeStream(c)
	case *OpenStream:
		return s.openStream(c)
	case *CloseStream:
		return s.closeStream(c)
	case *SetStreamMeta:
		return s.setStreamMeta(c)
	case *TrimStream:
		return s.trimStream(c)
	case *DeleteStream:
		return s.deleteStream(c)
	case *ReserveObjects:
		return s.reserveObjects(c)
	case *CommitObjects:
		return s.commitObjects(c)
	case *CompactObjects:
		return s.compactObjects(c)
	case *StartTransfer:
		return s.startTransfer(c)
	case *CompleteTransfer:
		return s.completeTransfer(c)
	case *ExpireReservations:
		return s.expireReservations(c)
	case *DestroyObjects:
		return s.destroyObjects(c)
	case *PutKV, *PutKVIf, *DeleteKV, *DeleteKVIf:
		return s.applyKV(c)
	case *FenceNode:
		return s.fenceNode(c)
	case *SealStream:
		return s.sealStream(c.By, c.Stream, c.Epoch, Closer{})
	case *SealStreamBy:
		return s.sealStream(c.By, c.Stream, c.Epoch, Closer{Known: true, Producer: c.Closer})
	case *CreateFork:
		return s.createFork(c)
	case *RecoveredStream:
		return s.recoveredStream(c)
	}
	return reject(ResultInvalid, "unknown command %T", c)
}

func proposerOf(c Command) Proposer {
	switch c := c.(type) {
	case *SetSlots:
		return c.By
	case *CreateStream:
		return c.By
	case *PlaceStream:
		return c.By
	case *OpenStream:
		return c.By
	case *CloseStream:
		return c.By
	case *SetStreamMeta:
		return c.By
	case *TrimStream:
		return c.By
	case *DeleteStream:
		return c.By
	case *ReserveObjects:
		return c.By
	case *CommitObjects:
		return c.By
	case *CompactObjects:
		return c.By
	case *StartTransfer:
		return c.By
	case *CompleteTransfer:
		return c.By
	case *ExpireReservations:
		return c.By
	case *DestroyObjects:
		return c.By
	case *PutKV:
		return c.By
	case *PutKVIf:
		return c.By
	case *DeleteKV:
		return c.By
	case *DeleteKVIf:
		return c.By
	case *FenceNode:
		return c.By
	case *SealStream:
		return c.By
	case *SealStreamBy:
		return c.By
	case *CreateFork:
		return c.By
	case *RecoveredStream:
		return c.By
	}
	return Proposer{}
}

// fence rejects commands from a process that is not the registered one.
func (s *State) fence(p Proposer) (Result, bool) {
	n, ok := s.Node(p.Node)
	if !ok {
		return reject(ResultNodeFenced, "node %d is not registered", p.Node), true
	}
	if n.Epoch != p.Epoch {
		return reject(ResultNodeFenced, "node %d is registered at epoch %d, not %d", p.Node, n.Epoch, p.Epoch), true
	}
	return Result{}, false
}
