package domain

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
)

// SnapshotVersion is the version byte that starts an encoded State.
const SnapshotVersion = 6

// ErrOlderSnapshot: the state holds what an older snapshot version cannot
// say (EncodeStateAt).
var ErrOlderSnapshot = errors.New("domain: the state needs a newer snapshot version")

// EncodeState encodes the whole state deterministically (maps in key order),
// so equal states encode to equal bytes on every replica.
func EncodeState(s *State) []byte {
	b, _ := EncodeStateAt(s, SnapshotVersion)
	return b
}

// EncodeStateAt encodes the state as snapshot version (5 or later), which
// every node of the cluster's feature level reads (SnapshotVersionAt). It
// fails with ErrOlderSnapshot when the state holds a fact that version
// cannot carry, rather than drop it.
func EncodeStateAt(s *State, version uint8) ([]byte, error) {
	if version < 5 || version > SnapshotVersion {
		return nil, fmt.Errorf("domain: cannot write snapshot version %d", version)
	}
	if version < 6 && s.awaitingCreate() {
		return nil, fmt.Errorf("%w: a stream awaits its create (version 6)", ErrOlderSnapshot)
	}
	if version < 6 && s.anyLeft() {
		return nil, fmt.Errorf("%w: a node left (version 6)", ErrOlderSnapshot)
	}
	e := &encoder{buf: make([]byte, 0, 256+128*s.streams.Len())}
	e.u8(version)
	for _, v := range []uint64{s.Index, s.Applied, s.NextStreamID, s.NextObjectID} {
		e.uvarint(v)
	}
	encodeMap(e, s.nodes, func(_ uint32, n *Node) {
		e.node(n.ID)
		e.uvarint(n.Epoch)
		e.str(n.Address)
		e.uvarint(uint64(n.Slots))
		e.uvarint(uint64(n.Assigned))
		if version >= 6 {
			e.boolean(n.Left)
		}
	})
	encodeMap(e, s.streams, func(_ uint64, st *Stream) { encodeStream(e, st, version) })
	encodeMap(e, s.objects, func(_ uint64, o *Object) {
		(&ObjectSpec{ID: o.ID, Size: o.Size, Ranges: o.Ranges}).encode(e)
		e.varint(o.CommittedMs)
		e.uvarint(uint64(o.Live))
	})
	encodeMap(e, s.reservations, func(id uint64, r Reservation) {
		e.uvarint(id)
		e.node(r.Node)
		e.varint(r.DeadlineMs)
	})
	encodeMap(e, s.garbage, func(id uint64, g Garbage) {
		e.uvarint(id)
		e.u8(uint8(g.Reason))
		e.uvarint(g.MarkedAt)
	})
	encodeMap(e, s.kv, func(k string, v KVEntry) {
		e.str(k)
		e.bytes(v.Value)
		e.uvarint(v.Rev)
	})
	return e.buf, nil
}

func encodeMap[K cmp.Ordered, V any](e *encoder, m pmap[K, V], fn func(K, V)) {
	e.uvarint(uint64(m.Len()))
	m.All(func(k K, v V) bool { fn(k, v); return true })
}

// awaitingCreate reports whether any stream awaits its create.
func (s *State) awaitingCreate() bool {
	found := false
	s.streams.All(func(_ uint64, st *Stream) bool { found = st.AwaitsCreate; return !found })
	return found
}

// anyLeft reports whether any node left on shutdown.
func (s *State) anyLeft() bool {
	found := false
	s.nodes.All(func(_ uint32, n *Node) bool { found = n.Left; return !found })
	return found
}

func encodeStream(e *encoder, st *Stream, version uint8) {
	e.uvarint(st.ID)
	e.str(st.Name)
	e.bytes(st.Meta)
	e.varint(st.CreatedMs)
	e.uvarint(st.Epoch)
	e.node(st.Owner)
	e.uvarint(st.OwnerEpoch)
	e.boolean(st.Open)
	e.boolean(st.Sealed)
	e.uvarint(st.ForkOf)
	e.uvarint(st.ForkAt)
	e.uvarint(uint64(st.Forks))
	e.boolean(st.SoftDeleted)
	e.node(st.TransferTo)
	e.uvarint(uint64(len(st.Unrecovered)))
	for _, p := range st.Unrecovered {
		e.proposer(p)
	}
	e.uvarint(st.Start)
	e.uvarint(st.End)
	encodeMap(e, st.Objects, func(start, id uint64) { e.uvarint(start); e.uvarint(id) })
	e.boolean(st.Closer.Known)
	if st.Closer.Known {
		e.stamp(st.Closer.Producer)
	}
	if version >= 6 {
		e.boolean(st.AwaitsCreate)
	}
}

// Hash returns the SHA-256 of the state's encoding: equal hashes mean
// identical replicas.
func (s *State) Hash() [32]byte { return sha256.Sum256(EncodeState(s)) }

// DecodeState decodes a snapshot. The result has passed CheckInvariants.
func DecodeState(b []byte) (State, error) {
	d := &decoder{buf: b}
	version := d.u8()
	if d.err == nil && (version < 1 || version > SnapshotVersion) {
		return State{}, fmt.Errorf("%w: snapshot version %d (a newer pico wrote it: upgrade this node)", ErrDecode, version)
	}
	s := State{Index: d.uvarint(), Applied: d.uvarint(), NextStreamID: d.uvarint(), NextObjectID: d.uvarint()}
	s.nodes = decodeMap(d, 3, func() (uint32, *Node) {
		n := &Node{ID: d.node(), Epoch: d.uvarint(), Address: d.str(), Slots: d.u32(), Assigned: d.u32()}
		if version >= 6 {
			n.Left = d.boolean()
		}
		return uint32(n.ID), n
	})
	s.streams = decodeMap(d, 12, func() (uint64, *Stream) { st := decodeStream(d, version); return st.ID, st })
	s.objects = decodeMap(d, 6, func() (uint64, *Object) {
		var spec ObjectSpec
		spec.decode(d)
		o := &Object{ID: spec.ID, Size: spec.Size, Ranges: spec.Ranges, CommittedMs: d.varint(), Live: d.u32()}
		return o.ID, o
	})
	s.reservations = decodeMap(d, 3, func() (uint64, Reservation) {
		return d.uvarint(), Reservation{Node: d.node(), DeadlineMs: d.varint()}
	})
	s.garbage = decodeMap(d, 3, func() (uint64, Garbage) {
		return d.uvarint(), Garbage{Reason: GarbageReason(d.u8()), MarkedAt: d.uvarint()}
	})
	s.kv = decodeMap(d, 3, func() (string, KVEntry) {
		return d.str(), KVEntry{Value: d.bytes(), Rev: d.uvarint()}
	})
	if err := d.finish(); err != nil {
		return State{}, err
	}
	s.names = namesOf(s.streams)
	s.wals, s.expiring = indexesOf(s.streams)
	if err := s.CheckInvariants(); err != nil {
		return State{}, fmt.Errorf("%w: snapshot violates an invariant: %v", ErrDecode, err)
	}
	return s, nil
}

func decodeMap[K cmp.Ordered, V any](d *decoder, minSize int, fn func() (K, V)) pmap[K, V] {
	var b pmapBuilder[K, V]
	n := d.count(minSize)
	for i := 0; i < n && d.err == nil; i++ {
		k, v := fn()
		if d.err == nil && !b.add(k, v) {
			d.fail("keys out of order")
		}
	}
	return b.build()
}

// decodeStream decodes one stream; version 1 snapshots predate Sealed,
// version 2 ones forks, version 3 ones Unrecovered, version 4 ones Closer.
func decodeStream(d *decoder, version uint8) *Stream {
	st := &Stream{ID: d.uvarint(), Name: d.str(), Meta: d.bytes(), CreatedMs: d.varint(), Epoch: d.uvarint(),
		Owner: d.node(), OwnerEpoch: d.uvarint(), Open: d.boolean()}
	if version >= 2 {
		st.Sealed = d.boolean()
	}
	if version >= 3 {
		st.ForkOf, st.ForkAt, st.Forks, st.SoftDeleted = d.uvarint(), d.uvarint(), d.u32(), d.boolean()
	}
	st.TransferTo = d.node()
	if version >= 4 {
		n := d.count(2)
		for i := 0; i < n && d.err == nil; i++ {
			st.Unrecovered = append(st.Unrecovered, d.proposer())
		}
	}
	st.Start, st.End = d.uvarint(), d.uvarint()
	st.Objects = decodeMap(d, 2, func() (uint64, uint64) { return d.uvarint(), d.uvarint() })
	if version >= 5 && d.boolean() {
		st.Closer = Closer{Known: true, Producer: d.stamp()}
	}
	if version >= 6 {
		st.AwaitsCreate = d.boolean()
	}
	return st
}

// namesOf rebuilds the name index. Duplicate names leave the index short,
// which CheckInvariants reports.
func namesOf(streams pmap[uint64, *Stream]) pmap[string, uint64] {
	type entry struct {
		name string
		id   uint64
	}
	all := make([]entry, 0, streams.Len())
	streams.All(func(id uint64, st *Stream) bool { all = append(all, entry{st.Name, id}); return true })
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.name, b.name) })
	var b pmapBuilder[string, uint64]
	for _, e := range all {
		b.add(e.name, e.id)
	}
	return b.build()
}
