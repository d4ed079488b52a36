package domain

import "slices"

func (s *State) createStream(c *CreateStream) Result {
	if r, valid := s.checkNewStream(c.Name, c.Meta); !valid {
		return r
	}
	st := &Stream{ID: s.NextStreamID, Name: c.Name, Meta: c.Meta, CreatedMs: c.NowMs}
	return s.addStream(st, c.By, c.Open)
}

func (s *State) placeStream(c *PlaceStream) Result {
	if r, valid := s.checkNewStream(c.Name, c.Meta); !valid {
		return r
	}
	st := &Stream{ID: s.NextStreamID, Name: c.Name, Meta: c.Meta, CreatedMs: c.NowMs}
	at, placed := s.Place()
	n, _ := s.Node(at)
	if !placed || at == c.By.Node {
		return s.addStream(st, c.By, true)
	}
	st.AwaitsCreate = c.Content
	return s.addStream(st, Proposer{Node: at, Epoch: n.Epoch}, true)
}

func (s *State) createFork(c *CreateFork) Result {
	if r, valid := s.checkNewStream(c.Name, c.Meta); !valid {
		return r
	}
	src, found := s.Stream(c.Source)
	switch {
	case !found:
		return reject(ResultNotFound, "fork source %d does not exist", c.Source)
	case src.SoftDeleted:
		return reject(ResultConflict, "fork source %d is deleted", c.Source)
	case c.At > src.End:
		return reject(ResultInvalid, "fork at %d beyond the source's committed end %d", c.At, src.End)
	case c.At < s.ReadStart(src):
		return reject(ResultInvalid, "fork at %d below the source's first record %d", c.At, s.ReadStart(src))
	}
	source := *src
	source.Forks++
	s.putStream(&source)
	st := &Stream{ID: s.NextStreamID, Name: c.Name, Meta: c.Meta, CreatedMs: c.NowMs,
		ForkOf: c.Source, ForkAt: c.At, Start: c.At, End: c.At}
	return s.addStream(st, c.By, true)
}

func (s *State) checkNewStream(name string, meta []byte) (Result, bool) {
	switch {
	case name == "" || len(name) > MaxNameLen:
		return reject(ResultInvalid, "stream name must be 1..%d bytes", MaxNameLen), false
	case len(meta) > MaxMetaLen:
		return reject(ResultInvalid, "stream meta longer than %d bytes", MaxMetaLen), false
	}
	if id, taken := s.names.Get(name); taken {
		return Result{Code: ResultExists, Value: id, Reason: "stream name taken"}, false
	}
	return Result{}, true
}

// addStream registers a new stream under the next id, opened on the
// proposer at epoch 1 when open.
func (s *State) addStream(st *Stream, by Proposer, open bool) Result {
	st.ID = s.NextStreamID
	s.NextStreamID++
	if open {
		st.Owner, st.OwnerEpoch, st.Epoch, st.Open = by.Node, by.Epoch, 1, true
		s.reassign(0, by.Node)
	}
	s.putStream(st)
	s.names = s.names.Set(st.Name, st.ID)
	return ok(st.ID)
}

func (s *State) openStream(c *OpenStream) Result {
	old, found := s.Stream(c.Stream)
	switch {
	case !found:
		return reject(ResultNotFound, "stream %d does not exist", c.Stream)
	case old.SoftDeleted:
		return reject(ResultConflict, "stream %d is deleted (kept for its forks)", c.Stream)
	case c.Epoch == old.Epoch && s.isWriter(old, c.By):
		return redundant(c.Epoch)
	case c.Epoch <= old.Epoch:
		return reject(ResultStaleEpoch, "stream %d is at epoch %d, cannot open at %d", c.Stream, old.Epoch, c.Epoch)
	case s.IsOpen(old) && !s.isWriter(old, c.By):
		return reject(ResultNotClosed, "stream %d is open on node %d", c.Stream, old.Owner)
	case s.PendingTransfer(old) != 0 && old.TransferTo != c.By.Node && !s.isWriter(old, c.By):
		// Its writer may reopen it (after a close of unknown outcome)
		// until it lets it go; nobody else but the target may.
		return reject(ResultConflict, "stream %d is transferring to node %d", c.Stream, old.TransferTo)
	}
	st := *old
	st.Epoch, st.Owner, st.OwnerEpoch, st.Open = c.Epoch, c.By.Node, c.By.Epoch, true
	if c.By.Node == old.TransferTo || s.PendingTransfer(old) == 0 {
		st.TransferTo = 0 // the target has it, or the transfer had lapsed
	}
	st.Unrecovered = withUnrecovered(old, c.By)
	s.reassign(old.Owner, c.By.Node)
	s.putStream(&st)
	return ok(c.Epoch)
}

// withUnrecovered is old's Unrecovered list as a takeover by next leaves
// it: with old's writer added if it never closed the stream (its WAL may
// hold acknowledged records) and is not next itself. The list is copied on
// change, never shared with old.
func withUnrecovered(old *Stream, next Proposer) []Proposer {
	writer := Proposer{Node: old.Owner, Epoch: old.OwnerEpoch}
	if !old.Open || old.Owner == 0 || writer == next || slices.Contains(old.Unrecovered, writer) {
		return old.Unrecovered
	}
	return append(slices.Clip(old.Unrecovered), writer)
}

func (s *State) closeStream(c *CloseStream) Result {
	old, found := s.Stream(c.Stream)
	switch {
	case !found:
		return reject(ResultNotFound, "stream %d does not exist", c.Stream)
	case c.Epoch != old.Epoch:
		return reject(ResultStaleEpoch, "stream %d is at epoch %d, not %d", c.Stream, old.Epoch, c.Epoch)
	case !s.IsOpen(old):
		return redundant(c.Epoch)
	case !s.isWriter(old, c.By):
		return reject(ResultStaleEpoch, "stream %d is open on node %d, not %d", c.Stream, old.Owner, c.By.Node)
	}
	st := *old
	st.Open = false
	s.putStream(&st)
	return ok(c.Epoch)
}

// sealStream applies SealStream and SealStreamBy; a redundant seal keeps
// the first one's closer.
func (s *State) sealStream(by Proposer, stream, epoch uint64, closer Closer) Result {
	old, r, allowed := s.writable(stream, epoch, by)
	switch {
	case !allowed:
		return r
	case old.Sealed:
		return redundant(epoch)
	}
	st := *old
	st.Sealed, st.Closer = true, closer
	s.putStream(&st)
	return ok(epoch)
}

func (s *State) recoveredStream(c *RecoveredStream) Result {
	old, r, allowed := s.writable(c.Stream, c.Epoch, c.By)
	switch {
	case !allowed:
		return r
	case len(old.Unrecovered) == 0:
		return redundant(c.Epoch)
	}
	st := *old
	st.Unrecovered = nil
	s.putStream(&st)
	return ok(c.Epoch)
}

func (s *State) setStreamMeta(c *SetStreamMeta) Result {
	old, r, allowed := s.writable(c.Stream, c.Epoch, c.By)
	if !allowed {
		return r
	}
	if len(c.Meta) > MaxMetaLen {
		return reject(ResultInvalid, "stream meta longer than %d bytes", MaxMetaLen)
	}
	st := *old
	st.Meta = c.Meta
	s.putStream(&st)
	return ok(c.Epoch)
}

func (s *State) trimStream(c *TrimStream) Result {
	old, r, allowed := s.writable(c.Stream, c.Epoch, c.By)
	switch {
	case !allowed:
		return r
	case c.Start > old.End:
		return reject(ResultInvalid, "trim to %d beyond the committed end %d", c.Start, old.End)
	case old.Forks > 0 && c.Start > old.Start:
		return reject(ResultConflict, "stream %d has %d forks reading its records", c.Stream, old.Forks)
	case c.Start <= old.Start:
		return redundant(old.Start)
	}
	st := *old
	st.Start = c.Start
	var drop []uint64
	old.Objects.All(func(start, id uint64) bool {
		o, _ := s.Object(id)
		if end := rangeOf(o, st.ID).End; end > c.Start || (c.KeepLast && end == old.End) {
			// KeepLast: the last object stays even when trimmed away, for
			// the state its section holds (LastObject).
			return false
		}
		drop = append(drop, start)
		return true
	})
	for _, start := range drop {
		id, _ := st.Objects.Get(start)
		st.Objects = st.Objects.Delete(start)
		s.unref(id, GarbageTrimmed)
	}
	s.putStream(&st)
	return ok(c.Start)
}

func (s *State) deleteStream(c *DeleteStream) Result {
	old, found := s.Stream(c.Stream)
	switch {
	case !found:
		return reject(ResultNotFound, "stream %d does not exist", c.Stream)
	case c.Epoch != old.Epoch:
		return reject(ResultStaleEpoch, "stream %d is at epoch %d, not %d", c.Stream, old.Epoch, c.Epoch)
	case s.IsOpen(old) && !s.isWriter(old, c.By):
		return reject(ResultNotClosed, "stream %d is open on node %d", c.Stream, old.Owner)
	case old.SoftDeleted:
		return reject(ResultNotFound, "stream %d is already deleted", c.Stream)
	}
	if old.Forks > 0 {
		st := *old
		st.SoftDeleted, st.Open, st.Owner, st.OwnerEpoch = true, false, 0, 0
		s.reassign(old.Owner, 0)
		s.putStream(&st)
		return ok(old.ID)
	}
	s.removeStream(old)
	return ok(old.ID)
}

// removeStream drops a stream, its name and its objects, and releases its
// fork source, which goes too if it was only kept for its forks.
func (s *State) removeStream(st *Stream) {
	st.Objects.All(func(_, id uint64) bool {
		s.unref(id, GarbageDeleted)
		return true
	})
	s.reassign(st.Owner, 0)
	s.dropStream(st.ID)
	s.names = s.names.Delete(st.Name)
	if src, found := s.Stream(st.ForkOf); found && st.ForkOf != 0 {
		source := *src
		source.Forks--
		if source.Forks == 0 && source.SoftDeleted {
			s.removeStream(&source)
			return
		}
		s.putStream(&source)
	}
}

// isWriter reports whether p is the live process that holds st open.
func (s *State) isWriter(st *Stream, p Proposer) bool {
	return s.IsOpen(st) && st.Owner == p.Node && st.OwnerEpoch == p.Epoch
}

// writable returns the stream if p is its writer at epoch, else a rejection.
func (s *State) writable(id, epoch uint64, p Proposer) (*Stream, Result, bool) {
	st, found := s.Stream(id)
	switch {
	case !found:
		return nil, reject(ResultNotFound, "stream %d does not exist", id), false
	case st.Epoch != epoch:
		return nil, reject(ResultStaleEpoch, "stream %d is at epoch %d, not %d", id, st.Epoch, epoch), false
	case !s.isWriter(st, p):
		return nil, reject(ResultStaleEpoch, "node %d epoch %d is not the writer of stream %d", p.Node, p.Epoch, id), false
	}
	return st, Result{}, true
}

func (s *State) startTransfer(c *StartTransfer) Result {
	old, found := s.Stream(c.Stream)
	if !found {
		return reject(ResultNotFound, "stream %d does not exist", c.Stream)
	}
	if n, known := s.Node(c.To); !known || n.Slots == 0 {
		return reject(ResultInvalid, "transfer target node %d is not registered with slots", c.To)
	}
	pending := s.PendingTransfer(old)
	switch {
	case pending == c.To || (old.TransferTo == 0 && old.Owner == c.To):
		return redundant(uint64(c.To))
	case pending != 0:
		return reject(ResultConflict, "stream %d is already transferring to node %d", c.Stream, pending)
	case s.IsOpen(old) && !s.isWriter(old, c.By):
		return reject(ResultNotClosed, "stream %d is open on node %d: only its writer may transfer it", c.Stream, old.Owner)
	}
	// A lapsed transfer (its target has no slots) is replaced; one to the
	// stream's own node just ends it.
	st := *old
	st.TransferTo = c.To
	if old.Owner == c.To {
		st.TransferTo = 0
	}
	s.putStream(&st)
	return ok(uint64(c.To))
}

func (s *State) completeTransfer(c *CompleteTransfer) Result {
	old, found := s.Stream(c.Stream)
	switch {
	case !found:
		return reject(ResultNotFound, "stream %d does not exist", c.Stream)
	case old.TransferTo == 0:
		return redundant(uint64(old.Owner))
	case c.Epoch != old.Epoch:
		return reject(ResultStaleEpoch, "stream %d is at epoch %d, not %d", c.Stream, old.Epoch, c.Epoch)
	case s.IsOpen(old):
		return reject(ResultNotClosed, "stream %d is still open on node %d", c.Stream, old.Owner)
	}
	st := *old
	// The target has no process on the stream yet (OwnerEpoch 0); a writer
	// that vanished without closing it is listed, as OpenStream would.
	st.Unrecovered = withUnrecovered(old, Proposer{})
	st.Owner, st.OwnerEpoch, st.Open, st.TransferTo = old.TransferTo, 0, false, 0
	s.reassign(old.Owner, st.Owner)
	s.putStream(&st)
	return ok(uint64(st.Owner))
}
