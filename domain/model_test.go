package domain

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
)

// model is a deliberately naive reference for a few properties: stream
// names, nodes, key-value entries and the counters. It predicts results from
// the command semantics where that is simple and follows Apply otherwise.
type model struct {
	applied    uint64
	nextStream uint64
	names      map[string]uint64
	byID       map[uint64]string
	nodes      map[NodeID]Node // ID, Epoch, Address and Slots only
	kv         map[kvRef]KVEntry
	// forkOf, forks and soft follow fork references: a deleted stream with
	// forks is soft-deleted (name kept) until its last fork goes.
	forkOf map[uint64]uint64
	forks  map[uint64]int
	soft   map[uint64]bool
}

type kvRef struct {
	space KVSpace
	key   string
}

func newModel() *model {
	return &model{nextStream: 1, names: map[string]uint64{}, byID: map[uint64]string{},
		nodes: map[NodeID]Node{}, kv: map[kvRef]KVEntry{},
		forkOf: map[uint64]uint64{}, forks: map[uint64]int{}, soft: map[uint64]bool{}}
}

// field reads a named field of a command (a pointer to a struct).
func field(c Command, name string) (reflect.Value, bool) {
	f := reflect.ValueOf(c).Elem().FieldByName(name)
	return f, f.IsValid()
}

func expect(r Result, code ResultCode, value uint64, checkValue bool) error {
	if r.Code != code || (checkValue && r.Value != value) {
		if checkValue {
			return fmt.Errorf("got %v, model expects %v(%d)", r, code, value)
		}
		return fmt.Errorf("got %v, model expects %v", r, code)
	}
	return nil
}

// apply checks r against the model's prediction for c and updates the model.
func (m *model) apply(c Command, r Result) error {
	m.applied++
	if reg, ok := c.(*RegisterNode); ok {
		return m.register(reg, r)
	}
	by, _ := field(c, "By")
	p := by.Interface().(Proposer)
	n, known := m.nodes[p.Node]
	if fenced := !known || n.Epoch != p.Epoch; fenced != (r.Code == ResultNodeFenced) {
		return fmt.Errorf("got %v, model fenced=%v", r, fenced)
	} else if fenced {
		return nil
	}
	if id, ok := field(c, "Stream"); ok {
		if m.soft[id.Uint()] {
			return nil // kept for its forks: only Apply knows what each command does to it
		}
		if _, exists := m.byID[id.Uint()]; exists == (r.Code == ResultNotFound) {
			return fmt.Errorf("got %v, model has stream %d: %v", r, id.Uint(), exists)
		} else if !exists {
			return nil
		}
	}
	switch c := c.(type) {
	case *SetSlots:
		return m.setSlots(c, r)
	case *CreateStream:
		return m.create(c.Name, c.Meta, r)
	case *PlaceStream:
		return m.create(c.Name, c.Meta, r)
	case *CreateFork:
		return m.createFork(c, r)
	case *DeleteStream:
		if r.Code == ResultOK {
			if err := expect(r, ResultOK, c.Stream, true); err != nil {
				return err
			}
			m.remove(c.Stream)
		}
	case *PutKV:
		return m.put(kvRef{c.Space, c.Key}, c.Value, false, 0, r)
	case *PutKVIf:
		return m.put(kvRef{c.Space, c.Key}, c.Value, true, c.IfRev, r)
	case *DeleteKV:
		return m.del(kvRef{c.Space, c.Key}, false, 0, r)
	case *DeleteKVIf:
		return m.del(kvRef{c.Space, c.Key}, true, c.IfRev, r)
	case *FenceNode:
		return m.fence(c, r)
	}
	return nil
}

func (m *model) register(c *RegisterNode, r Result) error {
	old, known := m.nodes[c.Node]
	switch {
	case c.Node == 0:
		return expect(r, ResultInvalid, 0, false)
	case known && old.Epoch == c.Epoch && old.Address == c.Address && old.Slots == c.Slots:
		return expect(r, ResultRedundant, c.Epoch, true)
	case known && c.Epoch <= old.Epoch:
		return expect(r, ResultNodeFenced, 0, false)
	}
	m.nodes[c.Node] = Node{ID: c.Node, Epoch: c.Epoch, Address: c.Address, Slots: c.Slots}
	return expect(r, ResultOK, c.Epoch, true)
}

func (m *model) fence(c *FenceNode, r Result) error {
	n, known := m.nodes[c.Node]
	switch {
	case !known:
		return expect(r, ResultNotFound, 0, false)
	case n.Epoch > c.Epoch:
		return expect(r, ResultRedundant, n.Epoch, true)
	case n.Epoch < c.Epoch:
		return expect(r, ResultInvalid, 0, false)
	}
	n.Epoch, n.Slots = c.Epoch+1, 0
	m.nodes[c.Node] = n
	return expect(r, ResultOK, n.Epoch, true)
}

func (m *model) setSlots(c *SetSlots, r Result) error {
	n, known := m.nodes[c.Node]
	switch {
	case !known:
		return expect(r, ResultNotFound, 0, false)
	case n.Slots == c.Slots:
		return expect(r, ResultRedundant, uint64(c.Slots), true)
	}
	n.Slots = c.Slots
	m.nodes[c.Node] = n
	return expect(r, ResultOK, uint64(c.Slots), true)
}

func (m *model) create(name string, meta []byte, r Result) error {
	if name == "" || len(name) > MaxNameLen || len(meta) > MaxMetaLen {
		return expect(r, ResultInvalid, 0, false)
	}
	if id, taken := m.names[name]; taken {
		return expect(r, ResultExists, id, true)
	}
	id := m.nextStream
	m.nextStream++
	m.names[name], m.byID[id] = id, name
	return expect(r, ResultOK, id, true)
}

func (m *model) createFork(c *CreateFork, r Result) error {
	_, srcExists := m.byID[c.Source]
	switch {
	case c.Name == "" || len(c.Name) > MaxNameLen || len(c.Meta) > MaxMetaLen:
		return expect(r, ResultInvalid, 0, false)
	case m.names[c.Name] != 0:
		return expect(r, ResultExists, m.names[c.Name], true)
	case !srcExists:
		return expect(r, ResultNotFound, 0, false)
	case m.soft[c.Source]:
		return expect(r, ResultConflict, 0, false)
	case r.Code == ResultInvalid:
		return nil // the fork point is outside the source's offsets, which the model does not follow
	}
	id := m.nextStream
	m.nextStream++
	m.names[c.Name], m.byID[id] = id, c.Name
	m.forkOf[id] = c.Source
	m.forks[c.Source]++
	return expect(r, ResultOK, id, true)
}

// remove deletes a stream, or soft-deletes it while it has forks, and
// releases its source, cascading up through soft-deleted sources.
func (m *model) remove(id uint64) {
	if m.forks[id] > 0 {
		m.soft[id] = true
		return
	}
	delete(m.names, m.byID[id])
	delete(m.byID, id)
	delete(m.soft, id)
	src, isFork := m.forkOf[id]
	delete(m.forkOf, id)
	if !isFork {
		return
	}
	m.forks[src]--
	if m.forks[src] == 0 && m.soft[src] {
		m.remove(src)
	}
}

func validKey(k kvRef) bool {
	return (k.space == SpaceRegistry || k.space == SpaceTokens) && k.key != "" && len(k.key) <= MaxKeyLen
}

func (m *model) put(k kvRef, v []byte, cond bool, ifRev uint64, r Result) error {
	cur, present := m.kv[k]
	switch {
	case !validKey(k) || len(v) > MaxValueLen:
		return expect(r, ResultInvalid, 0, false)
	case cond && ifRev == 0 && present, cond && ifRev != 0 && (!present || cur.Rev != ifRev):
		return expect(r, ResultRevMismatch, cur.Rev, true)
	}
	m.kv[k] = KVEntry{Value: v, Rev: m.applied}
	return expect(r, ResultOK, m.applied, true)
}

func (m *model) del(k kvRef, cond bool, ifRev uint64, r Result) error {
	cur, present := m.kv[k]
	switch {
	case !validKey(k):
		return expect(r, ResultInvalid, 0, false)
	case !present && cond:
		return expect(r, ResultNotFound, 0, false)
	case !present:
		return expect(r, ResultRedundant, 0, true)
	case cond && cur.Rev != ifRev:
		return expect(r, ResultRevMismatch, cur.Rev, true)
	}
	delete(m.kv, k)
	return expect(r, ResultOK, cur.Rev, true)
}

// compare checks the state against the model.
func (m *model) compare(s *State) error {
	if s.Applied != m.applied || s.NextStreamID != m.nextStream {
		return fmt.Errorf("applied %d next stream %d, model %d %d", s.Applied, s.NextStreamID, m.applied, m.nextStream)
	}
	names := map[string]uint64{}
	s.StreamsFrom("", func(st *Stream) bool { names[st.Name] = st.ID; return true })
	if !maps.Equal(names, m.names) || s.StreamCount() != len(m.names) {
		return fmt.Errorf("streams %v (count %d), model %v", names, s.StreamCount(), m.names)
	}
	for name, id := range m.names {
		if st, ok := s.StreamByName(name); !ok || st.ID != id {
			return fmt.Errorf("StreamByName(%q) does not give stream %d", name, id)
		}
	}
	nodes := map[NodeID]Node{}
	s.Nodes(func(n *Node) bool {
		nodes[n.ID] = Node{ID: n.ID, Epoch: n.Epoch, Address: n.Address, Slots: n.Slots}
		return true
	})
	if !maps.Equal(nodes, m.nodes) {
		return fmt.Errorf("nodes %v, model %v", nodes, m.nodes)
	}
	kv := map[kvRef]KVEntry{}
	for _, sp := range []KVSpace{SpaceRegistry, SpaceTokens} {
		s.KVFrom(sp, "", func(k string, e KVEntry) bool { kv[kvRef{sp, k}] = e; return true })
	}
	if !maps.EqualFunc(kv, m.kv, func(a, b KVEntry) bool { return a.Rev == b.Rev && bytes.Equal(a.Value, b.Value) }) {
		return fmt.Errorf("kv %v, model %v", kv, m.kv)
	}
	return nil
}

// monotonic checks what no command may ever undo between two states.
func monotonic(pre, post *State) error {
	if post.NextStreamID < pre.NextStreamID || post.NextObjectID < pre.NextObjectID || post.Index != pre.Index {
		return fmt.Errorf("counters went back: %d/%d/%d -> %d/%d/%d", pre.NextStreamID, pre.NextObjectID,
			pre.Index, post.NextStreamID, post.NextObjectID, post.Index)
	}
	var err error
	pre.streams.All(func(id uint64, a *Stream) bool {
		b, ok := post.Stream(id)
		if ok && (b.Epoch < a.Epoch || b.Start < a.Start || b.End < a.End || b.Name != a.Name || b.CreatedMs != a.CreatedMs) {
			err = fmt.Errorf("stream %d went back: %+v -> %+v", id, *a, *b)
		}
		return err == nil
	})
	pre.nodes.All(func(id uint32, a *Node) bool {
		if b, ok := post.Node(NodeID(id)); !ok || b.Epoch < a.Epoch {
			err = fmt.Errorf("node %d went back or vanished", id)
		}
		return err == nil
	})
	return err
}
