package domain

func (s *State) registerNode(c *RegisterNode) Result {
	if c.Node == 0 {
		return reject(ResultInvalid, "node id 0 is reserved")
	}
	if len(c.Address) > MaxNameLen {
		return reject(ResultInvalid, "address longer than %d bytes", MaxNameLen)
	}
	old, known := s.Node(c.Node)
	if known {
		switch {
		case c.Epoch == old.Epoch && c.Address == old.Address && c.Slots == old.Slots:
			return redundant(c.Epoch)
		case c.Epoch <= old.Epoch:
			return reject(ResultNodeFenced, "node %d is registered at epoch %d, cannot register at %d",
				c.Node, old.Epoch, c.Epoch)
		}
	}
	n := &Node{ID: c.Node, Epoch: c.Epoch, Address: c.Address, Slots: c.Slots}
	if known {
		n.Assigned = old.Assigned
	}
	s.nodes = s.nodes.Set(uint32(c.Node), n)
	return ok(c.Epoch)
}

func (s *State) setSlots(c *SetSlots) Result {
	old, known := s.Node(c.Node)
	if !known {
		return reject(ResultNotFound, "node %d is not registered", c.Node)
	}
	if old.Slots == c.Slots {
		return redundant(uint64(c.Slots))
	}
	n := *old
	n.Slots = c.Slots
	s.nodes = s.nodes.Set(uint32(n.ID), &n)
	return ok(uint64(c.Slots))
}

func (s *State) fenceNode(c *FenceNode) Result {
	old, known := s.Node(c.Node)
	switch {
	case !known:
		return reject(ResultNotFound, "node %d is not registered", c.Node)
	case old.Epoch > c.Epoch:
		return redundant(old.Epoch)
	case old.Epoch < c.Epoch:
		return reject(ResultInvalid, "node %d is registered at epoch %d, not %d", c.Node, old.Epoch, c.Epoch)
	}
	n := *old
	n.Epoch, n.Slots = c.Epoch+1, 0 // no live process holds the new epoch: take no placements
	n.Left = c.By == Proposer{Node: c.Node, Epoch: c.Epoch}
	s.nodes = s.nodes.Set(uint32(n.ID), &n)
	return ok(n.Epoch)
}

// reassign moves one stream's home from node from to node to.
func (s *State) reassign(from, to NodeID) {
	if from == to {
		return
	}
	if n, known := s.Node(from); known {
		c := *n
		c.Assigned--
		s.nodes = s.nodes.Set(uint32(from), &c)
	}
	if n, known := s.Node(to); known {
		c := *n
		c.Assigned++
		s.nodes = s.nodes.Set(uint32(to), &c)
	}
}

// Place picks the node for a new or homeless stream: the registered node with
// the lowest assigned/slots ratio, ties to the lowest id. Nodes with zero
// slots are never chosen. It reports false when no node has slots.
func (s *State) Place() (NodeID, bool) {
	var best *Node
	s.nodes.All(func(_ uint32, n *Node) bool {
		if n.Slots == 0 {
			return true
		}
		// a/b < c/d  <=>  a*d < c*b, exact in 64 bits for 32-bit inputs
		if best == nil || uint64(n.Assigned)*uint64(best.Slots) < uint64(best.Assigned)*uint64(n.Slots) {
			best = n
		}
		return true
	})
	if best == nil {
		return 0, false
	}
	return best.ID, true
}
