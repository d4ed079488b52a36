package domain

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
)

// The view indexes two sets of streams that maintenance passes look for,
// so that a pass visits what it may act on, not every stream: the node
// processes whose WALs streams name (StreamsNamingWALs), each with the
// number of namings and how many of them are streams it owns open
// (OpenStreamsOf), and the streams whose configuration can expire them
// (StreamConfig.Expires). Both derive from the streams alone: every write
// to s.streams goes through putStream or dropStream, snapshot decoding
// rebuilds them, and CheckInvariants compares them with a full scan.

// putStream stores st under its id and keeps the indexes.
func (s *State) putStream(st *Stream) {
	old, _ := s.streams.Get(st.ID)
	s.streams = s.streams.Set(st.ID, st)
	s.reindex(old, st)
}

// dropStream removes stream id and its index entries.
func (s *State) dropStream(id uint64) {
	old, ok := s.streams.Get(id)
	if !ok {
		return
	}
	s.streams = s.streams.Delete(id)
	s.reindex(old, nil)
}

// reindex moves the index entries of a stream from old to st; either may
// be nil (a new stream, a removed one).
func (s *State) reindex(old, st *Stream) {
	if old == nil || st == nil || !sameWALs(old, st) {
		if old != nil {
			namingWALs(old, func(p Proposer, owner bool) { s.wals = countWAL(s.wals, p, owner, -1) })
		}
		if st != nil {
			namingWALs(st, func(p Proposer, owner bool) { s.wals = countWAL(s.wals, p, owner, +1) })
		}
	}
	if old != nil && st != nil && bytes.Equal(old.Meta, st.Meta) {
		return // same configuration, same entry
	}
	switch id := streamID(old, st); {
	case st != nil && expires(st.Meta):
		if old == nil || !expires(old.Meta) {
			s.expiring = s.expiring.Set(id, struct{}{})
		}
	case old != nil && expires(old.Meta):
		s.expiring = s.expiring.Delete(id)
	}
}

func streamID(old, st *Stream) uint64 {
	if st != nil {
		return st.ID
	}
	return old.ID
}

// namingWALs calls fn for each node process whose WAL a takeover of st
// would read, once per naming (a process may be named twice), with owner
// true for the process that has st open.
func namingWALs(st *Stream, fn func(p Proposer, owner bool)) {
	if st.Open {
		fn(Proposer{Node: st.Owner, Epoch: st.OwnerEpoch}, true)
	}
	for _, p := range st.Unrecovered {
		fn(p, false)
	}
}

func sameWALs(a, b *Stream) bool {
	return a.Open == b.Open && (!a.Open || a.Owner == b.Owner && a.OwnerEpoch == b.OwnerEpoch) &&
		slices.Equal(a.Unrecovered, b.Unrecovered)
}

// expires reports whether a stream configuration can expire its stream;
// a configuration that does not decode cannot. Most set neither an expiry
// nor an idle TTL, which mayExpire tells without decoding (Apply calls this
// for every new stream).
func expires(meta []byte) bool {
	if !mayExpire(meta) {
		return false
	}
	cfg, err := DecodeStreamConfig(meta)
	return err == nil && cfg.Expires()
}

// mayExpire is false when meta is no stream configuration, or one whose
// expiry and idle TTL (EncodeStreamConfig) are both zero; true otherwise.
func mayExpire(meta []byte) bool {
	if len(meta) == 0 || meta[0] != streamConfigVersion {
		return false
	}
	rest := meta[1:]
	n, size := binary.Uvarint(rest)
	if size <= 0 || n > uint64(len(rest)-size) {
		return false
	}
	rest = rest[size+int(n):]
	if _, size = binary.Uvarint(rest); size <= 0 { // TTL
		return false
	}
	rest = rest[size:]
	at, size := binary.Varint(rest)
	if size <= 0 {
		return false
	}
	if rest = rest[size:]; at != 0 || len(rest) == 0 {
		return at != 0
	}
	idle, size := binary.Uvarint(rest)
	return size <= 0 || idle != 0
}

// walKey orders processes by node, then epoch.
func walKey(p Proposer) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(p.Node))
	binary.BigEndian.PutUint64(b[4:], p.Epoch)
	return string(b[:])
}

func walProposer(k string) Proposer {
	return Proposer{Node: NodeID(binary.BigEndian.Uint32([]byte(k[:4]))), Epoch: binary.BigEndian.Uint64([]byte(k[4:]))}
}

// walNamings counts the streams naming a process's WAL: all of them, and
// those the process owns open.
type walNamings struct{ all, open uint32 }

func (n *walNamings) add(owner bool, delta int) {
	n.all = uint32(int(n.all) + delta)
	if owner {
		n.open = uint32(int(n.open) + delta)
	}
}

func countWAL(m pmap[string, walNamings], p Proposer, owner bool, delta int) pmap[string, walNamings] {
	k := walKey(p)
	n, _ := m.Get(k)
	if n.add(owner, delta); n.all == 0 {
		return m.Delete(k)
	}
	return m.Set(k, n)
}

// NamedWALs calls fn, in node then epoch order, for each node process
// whose WAL some stream names (StreamsNamingWALs), with how many namings
// it has, until fn returns false.
func (s *State) NamedWALs(fn func(p Proposer, namings uint32) bool) {
	s.wals.All(func(k string, n walNamings) bool { return fn(walProposer(k), n.all) })
}

// OpenStreamsOf is the number of streams StreamsOf(p) visits, without
// visiting them.
func (s *State) OpenStreamsOf(p Proposer) int {
	n, _ := s.wals.Get(walKey(p))
	return int(n.open)
}

// ExpiringStreams calls fn for each stream whose configuration can expire
// it (StreamConfig.Expires), in id order, until fn returns false.
func (s *State) ExpiringStreams(fn func(*Stream) bool) {
	s.expiring.All(func(id uint64, _ struct{}) bool {
		st, _ := s.streams.Get(id)
		return fn(st)
	})
}

// indexesOf builds the indexes of streams from scratch.
func indexesOf(streams pmap[uint64, *Stream]) (wals pmap[string, walNamings], expiring pmap[uint64, struct{}]) {
	counts := map[Proposer]walNamings{}
	var b pmapBuilder[uint64, struct{}]
	streams.All(func(id uint64, st *Stream) bool {
		namingWALs(st, func(p Proposer, owner bool) {
			n := counts[p]
			n.add(owner, 1)
			counts[p] = n
		})
		if expires(st.Meta) {
			b.add(id, struct{}{})
		}
		return true
	})
	var w pmapBuilder[string, walNamings]
	keys := make([]string, 0, len(counts))
	for p := range counts {
		keys = append(keys, walKey(p))
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.add(k, counts[walProposer(k)])
	}
	return w.build(), b.build()
}

// checkIndexes: the indexes hold exactly what a full scan of the streams
// finds.
func (s *State) checkIndexes() error {
	wals, expiring := indexesOf(s.streams)
	if err := samePmap(s.wals, wals, func(k string) any { return walProposer(k) }); err != nil {
		return fmt.Errorf("WAL index: %v", err)
	}
	if err := samePmap(s.expiring, expiring, func(id uint64) any { return id }); err != nil {
		return fmt.Errorf("expiring index: %v", err)
	}
	return nil
}

func samePmap[K cmp.Ordered, V comparable](got, want pmap[K, V], show func(K) any) error {
	type entry struct {
		k K
		v V
	}
	var g, w []entry
	got.All(func(k K, v V) bool { g = append(g, entry{k, v}); return true })
	want.All(func(k K, v V) bool { w = append(w, entry{k, v}); return true })
	if got.Len() != len(g) {
		return fmt.Errorf("counts %d entries, holds %d", got.Len(), len(g))
	}
	for i := range max(len(g), len(w)) {
		switch {
		case i >= len(g):
			return fmt.Errorf("lacks %v: %v", show(w[i].k), w[i].v)
		case i >= len(w):
			return fmt.Errorf("holds %v: %v, which the streams do not give", show(g[i].k), g[i].v)
		case g[i] != w[i]:
			return fmt.Errorf("holds %v: %v where the streams give %v: %v", show(g[i].k), g[i].v, show(w[i].k), w[i].v)
		}
	}
	return nil
}
