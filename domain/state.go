package domain

// NodeID names a node across restarts (the --node-id flag). Zero means "no node".
type NodeID uint32

// Node is a registered node. Epoch is the fencing token of its current
// process: a restart registers at a higher epoch, which voids every claim the
// previous process made.
type Node struct {
	ID      NodeID
	Epoch   uint64
	Address string
	Slots   uint32
	// Assigned counts the streams whose home is this node (open or not); it
	// drives placement.
	Assigned uint32
	// Left: its last process fenced itself on shutdown (a FenceNode it
	// proposed), rather than being fenced by the cluster.
	Left bool
}

// Stream is the metadata of one stream. It is immutable once stored in a
// State: Apply replaces it with a modified copy.
type Stream struct {
	ID   uint64
	Name string
	// Meta is the protocol-level configuration (content type, retention, ...),
	// opaque to the domain and owned by the app.
	Meta      []byte
	CreatedMs int64
	// Epoch increases with every open; an OpenStream at a higher epoch is the
	// fence that retires the previous writer.
	Epoch uint64
	// Owner is the stream's home node, 0 when it has none.
	Owner NodeID
	// OwnerEpoch is the owner's node epoch when it opened the stream (0
	// after a transfer, until the target opens it). The stream is open only
	// while the owner is still registered at that epoch.
	OwnerEpoch uint64
	Open       bool
	// Sealed: closed for appends for good (SealStream, SealStreamBy).
	Sealed bool
	// Closer names the request that sealed the stream (SealStreamBy).
	Closer Closer
	// ForkOf is the stream this one was forked from (0: none); offsets
	// below ForkAt are read from it.
	ForkOf, ForkAt uint64
	// Forks counts the streams forked from this one. While it is not zero
	// the stream keeps its records: it cannot be trimmed, and deleting it
	// only soft-deletes it (SoftDeleted: gone for clients, readable through
	// its forks) until its last fork is deleted.
	Forks       uint32
	SoftDeleted bool
	// TransferTo is the target of a pending transfer, 0 when none.
	TransferTo NodeID
	// AwaitsCreate: placed on its node by a create, made on another node,
	// that carried initial records or a close; the create, redirected to
	// the stream's node, writes them there if the stream is still empty
	// and unsealed (PlaceStream).
	AwaitsCreate bool
	// Unrecovered lists earlier writers, oldest first, whose WALs may hold
	// acknowledged records beyond End that no later writer has yet made
	// durable in its own WAL: an open or a transfer that takes the stream
	// from a writer that never closed it adds that writer, and
	// RecoveredStream empties the list. A takeover reads every WAL listed
	// (then the previous writer's), so a writer that dies while recovering
	// loses nothing its predecessors acknowledged.
	Unrecovered []Proposer
	// Start and End bound the offsets held in committed data objects.
	Start, End uint64
	// Objects maps the start offset of each committed range of this stream to
	// the object that holds it. Ranges are contiguous and end at End.
	Objects pmap[uint64, uint64]
}

// Range is the part of one stream held by an object: offsets [Start, End)
// written at stream epoch Epoch.
type Range struct {
	Stream uint64
	Epoch  uint64
	Start  uint64
	End    uint64
}

// Object is a committed data object in the object store.
type Object struct {
	ID          uint64
	Size        uint64
	CommittedMs int64
	Ranges      []Range
	// Live counts the ranges still indexed by their stream; at zero the object
	// becomes garbage.
	Live uint32
}

// Reservation holds an object id reserved by a node before it uploads.
type Reservation struct {
	Node       NodeID
	DeadlineMs int64
}

// GarbageReason says why an object was marked for deletion.
type GarbageReason uint8

// Garbage reasons. Append-only: they are part of the snapshot encoding.
const (
	GarbageTrimmed GarbageReason = iota + 1
	GarbageDeleted
	GarbageCompacted
	GarbageExpired
)

// Garbage is an object whose bytes must be deleted from the object store
// before its id is forgotten (DestroyObjects).
type Garbage struct {
	Reason   GarbageReason
	MarkedAt uint64 // State.Applied when marked
}

// KVSpace separates the key-value namespaces.
type KVSpace uint8

// Key-value spaces. Append-only.
const (
	SpaceRegistry KVSpace = iota + 1
	SpaceTokens
)

// KVEntry is a value with the revision (State.Applied) of its last write.
type KVEntry struct {
	Value []byte
	Rev   uint64
}

// State is the whole cluster metadata. A State value is a cheap, immutable
// view: every map is persistent, so copying the struct shares all entries
// and later Applies on the original never affect the copy.
type State struct {
	// Index is the log row whose commands were applied last.
	Index uint64
	// Applied counts every command applied, rejected ones included; it is the
	// revision clock for key-value entries.
	Applied      uint64
	NextStreamID uint64
	NextObjectID uint64

	nodes        pmap[uint32, *Node]
	streams      pmap[uint64, *Stream]
	names        pmap[string, uint64]
	objects      pmap[uint64, *Object]
	reservations pmap[uint64, Reservation]
	garbage      pmap[uint64, Garbage]
	kv           pmap[string, KVEntry]

	// Indexes of streams, derived from them (index.go).
	wals     pmap[string, walNamings] // walKey of a process -> its namings
	expiring pmap[uint64, struct{}]   // streams StreamConfig.Expires
}

// NewState returns the empty initial state.
func NewState() State {
	return State{NextStreamID: 1, NextObjectID: 1}
}

// Node returns a registered node.
func (s *State) Node(id NodeID) (*Node, bool) { return s.nodes.Get(uint32(id)) }

// Nodes calls fn for each registered node in id order.
func (s *State) Nodes(fn func(*Node) bool) {
	s.nodes.All(func(_ uint32, n *Node) bool { return fn(n) })
}

// Stream returns a stream by id.
func (s *State) Stream(id uint64) (*Stream, bool) { return s.streams.Get(id) }

// StreamByName returns a stream by name.
func (s *State) StreamByName(name string) (*Stream, bool) {
	id, ok := s.names.Get(name)
	if !ok {
		return nil, false
	}
	return s.streams.Get(id)
}

// StreamCount returns the number of streams.
func (s *State) StreamCount() int { return s.streams.Len() }

// StreamsFrom calls fn for streams whose name is >= from, in name order,
// until fn returns false. Listing by prefix starts at the prefix.
func (s *State) StreamsFrom(from string, fn func(*Stream) bool) {
	s.names.Ascend(from, func(_ string, id uint64) bool {
		st, _ := s.streams.Get(id)
		return fn(st)
	})
}

// Object returns a committed object.
func (s *State) Object(id uint64) (*Object, bool) { return s.objects.Get(id) }

// ObjectAt returns the object holding offset off of stream st, if committed.
func (s *State) ObjectAt(st *Stream, off uint64) (*Object, bool) {
	if off < st.Start || off >= st.End {
		return nil, false
	}
	_, id, ok := st.Objects.Floor(off)
	if !ok {
		return nil, false
	}
	return s.objects.Get(id)
}

// LastObject returns the object holding the stream's last committed record,
// whose section carries its producer state as of End. A trim keeps it even
// when it trims every record (states from before that rule may lack it).
func (s *State) LastObject(st *Stream) (*Object, bool) {
	if st.End == 0 {
		return nil, false
	}
	_, id, ok := st.Objects.Floor(st.End - 1)
	if !ok {
		return nil, false
	}
	return s.objects.Get(id)
}

// Superseded reports whether node process p is gone for good: its node is
// registered at a later epoch (a restart, or FenceNode). A process the state
// does not know yet is not superseded.
func (s *State) Superseded(p Proposer) bool {
	n, ok := s.Node(p.Node)
	return ok && n.Epoch > p.Epoch
}

// WALsInUse returns the node processes whose WALs a takeover may still
// read: the writers of streams never closed (the next open fences them)
// and the writers streams list as unrecovered.
func (s *State) WALsInUse() map[Proposer]bool {
	used := map[Proposer]bool{}
	s.NamedWALs(func(p Proposer, _ uint32) bool {
		used[p] = true
		return true
	})
	return used
}

// StreamsNamingWALs calls fn for each stream and each node process whose
// WAL a takeover of it would read (see WALsInUse), until fn returns false.
func (s *State) StreamsNamingWALs(fn func(p Proposer, st *Stream) bool) {
	s.streams.All(func(_ uint64, st *Stream) bool {
		if st.Open && !fn(Proposer{Node: st.Owner, Epoch: st.OwnerEpoch}, st) {
			return false
		}
		for _, p := range st.Unrecovered {
			if !fn(p, st) {
				return false
			}
		}
		return true
	})
}

// StreamsOf calls fn for each stream that node process p opened and has
// not closed (open while p is not superseded), until fn returns false.
func (s *State) StreamsOf(p Proposer, fn func(st *Stream) bool) {
	s.streams.All(func(_ uint64, st *Stream) bool {
		if st.Open && st.Owner == p.Node && st.OwnerEpoch == p.Epoch {
			return fn(st)
		}
		return true
	})
}

// Reservation returns a reserved object id.
func (s *State) Reservation(id uint64) (Reservation, bool) { return s.reservations.Get(id) }

// ExpiredReservations returns the reserved object ids whose deadline is at
// or before nowMs: those ExpireReservations at nowMs marks as garbage.
func (s *State) ExpiredReservations(nowMs int64) []uint64 {
	var expired []uint64
	s.reservations.All(func(id uint64, r Reservation) bool {
		if r.DeadlineMs <= nowMs {
			expired = append(expired, id)
		}
		return true
	})
	return expired
}

// GarbageFrom calls fn for marked objects with id >= from, in id order.
func (s *State) GarbageFrom(from uint64, fn func(id uint64, g Garbage) bool) {
	s.garbage.Ascend(from, fn)
}

// GarbageCount returns the number of objects awaiting deletion.
func (s *State) GarbageCount() int { return s.garbage.Len() }

// KV returns a key-value entry.
func (s *State) KV(space KVSpace, key string) (KVEntry, bool) {
	return s.kv.Get(kvKey(space, key))
}

// KVFrom calls fn for keys of space that are >= from, in key order.
func (s *State) KVFrom(space KVSpace, from string, fn func(key string, e KVEntry) bool) {
	s.kv.Ascend(kvKey(space, from), func(k string, e KVEntry) bool {
		if k[0] != byte(space) {
			return false
		}
		return fn(k[1:], e)
	})
}

func kvKey(space KVSpace, key string) string { return string([]byte{byte(space)}) + key }

// IsOpen reports whether st is open: opened and its owner still registered at
// the node epoch that opened it (a restart implicitly closes its streams).
func (s *State) IsOpen(st *Stream) bool {
	if !st.Open {
		return false
	}
	n, ok := s.Node(st.Owner)
	return ok && n.Epoch == st.OwnerEpoch
}

// PendingTransfer is the node st is being transferred to, or 0. A transfer
// holds only while its target takes placements (is registered with
// slots): a target that was fenced, or set to zero slots, lets the stream
// open anywhere again, and its next open ends the transfer.
func (s *State) PendingTransfer(st *Stream) NodeID {
	if st.TransferTo == 0 {
		return 0
	}
	if n, ok := s.Node(st.TransferTo); !ok || n.Slots == 0 {
		return 0
	}
	return st.TransferTo
}

// ReadStart is the first offset readable from st: its start, or for a fork
// not trimmed past its fork point, the first offset of the sources it
// inherits from.
func (s *State) ReadStart(st *Stream) uint64 {
	for st.ForkOf != 0 && st.Start == st.ForkAt {
		src, ok := s.Stream(st.ForkOf)
		if !ok {
			break
		}
		st = src
	}
	return st.Start
}

// Closer names the request that sealed a stream: Known is false for a seal
// that did not name it (SealStream), and Producer is nil for a request
// without a producer stamp.
type Closer struct {
	Known    bool
	Producer *ProducerStamp
}

// RepeatedBy reports whether a request stamped p repeats the one that
// sealed the stream; false when that one is not known.
func (c Closer) RepeatedBy(p *ProducerStamp) bool {
	return c.Producer != nil && p != nil && *c.Producer == *p
}
