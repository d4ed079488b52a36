package domain

import "cmp"

// pmap is a persistent ordered map: a treap whose priorities are a hash of the
// key, with path copying. Set and Delete return a new map and never modify the
// receiver, so a published State shares almost everything with its successor
// and publishing a view per applied row costs O(log n), not a copy.
// Priorities derive from keys (not randomness) so every replica builds the
// same tree shape.
type pmap[K cmp.Ordered, V any] struct {
	root *pnode[K, V]
	n    int
}

type pnode[K cmp.Ordered, V any] struct {
	key         K
	val         V
	prio        uint64
	left, right *pnode[K, V]
}

// Len returns the number of entries.
func (m pmap[K, V]) Len() int { return m.n }

// Get returns the value stored under k.
func (m pmap[K, V]) Get(k K) (V, bool) {
	n := m.root
	for n != nil {
		switch c := cmp.Compare(k, n.key); {
		case c < 0:
			n = n.left
		case c > 0:
			n = n.right
		default:
			return n.val, true
		}
	}
	var zero V
	return zero, false
}

// Floor returns the entry with the greatest key <= k.
func (m pmap[K, V]) Floor(k K) (K, V, bool) {
	var best *pnode[K, V]
	for n := m.root; n != nil; {
		if cmp.Compare(n.key, k) <= 0 {
			best, n = n, n.right
		} else {
			n = n.left
		}
	}
	if best == nil {
		var zk K
		var zv V
		return zk, zv, false
	}
	return best.key, best.val, true
}

// Set returns a map with k bound to v.
func (m pmap[K, V]) Set(k K, v V) pmap[K, V] {
	root, added := m.root.insert(k, v, keyPrio(k))
	if added {
		m.n++
	}
	m.root = root
	return m
}

// Delete returns a map without k.
func (m pmap[K, V]) Delete(k K) pmap[K, V] {
	root, removed := m.root.remove(k)
	if removed {
		m.n--
		m.root = root
	}
	return m
}

// Ascend calls fn for every entry with key >= from, in key order, until fn
// returns false.
func (m pmap[K, V]) Ascend(from K, fn func(K, V) bool) {
	m.root.ascend(from, fn)
}

// All calls fn for every entry in key order until fn returns false.
func (m pmap[K, V]) All(fn func(K, V) bool) {
	m.root.all(fn)
}

func (n *pnode[K, V]) insert(k K, v V, p uint64) (*pnode[K, V], bool) {
	if n == nil {
		return &pnode[K, V]{key: k, val: v, prio: p}, true
	}
	c := *n
	var added bool
	switch d := cmp.Compare(k, n.key); {
	case d < 0:
		c.left, added = n.left.insert(k, v, p)
		if c.left.prio > c.prio {
			l := c.left // freshly copied by the recursive call, safe to modify
			c.left, l.right = l.right, &c
			return l, added
		}
	case d > 0:
		c.right, added = n.right.insert(k, v, p)
		if c.right.prio > c.prio {
			r := c.right
			c.right, r.left = r.left, &c
			return r, added
		}
	default:
		c.val = v
	}
	return &c, added
}

func (n *pnode[K, V]) remove(k K) (*pnode[K, V], bool) {
	if n == nil {
		return nil, false
	}
	var removed bool
	c := *n
	switch d := cmp.Compare(k, n.key); {
	case d < 0:
		if c.left, removed = n.left.remove(k); !removed {
			return n, false
		}
	case d > 0:
		if c.right, removed = n.right.remove(k); !removed {
			return n, false
		}
	default:
		return merge(n.left, n.right), true
	}
	return &c, true
}

// merge joins two treaps where every key of a is below every key of b.
func merge[K cmp.Ordered, V any](a, b *pnode[K, V]) *pnode[K, V] {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		c := *a
		c.right = merge(a.right, b)
		return &c
	default:
		c := *b
		c.left = merge(a, b.left)
		return &c
	}
}

func (n *pnode[K, V]) ascend(from K, fn func(K, V) bool) bool {
	if n == nil {
		return true
	}
	if cmp.Compare(from, n.key) < 0 {
		if !n.left.ascend(from, fn) {
			return false
		}
	}
	if cmp.Compare(from, n.key) <= 0 {
		if !fn(n.key, n.val) {
			return false
		}
	}
	return n.right.ascend(from, fn)
}

func (n *pnode[K, V]) all(fn func(K, V) bool) bool {
	if n == nil {
		return true
	}
	return n.left.all(fn) && fn(n.key, n.val) && n.right.all(fn)
}

// pmapBuilder builds a pmap from entries given in strictly ascending key
// order in O(n), the shape Set would produce. Snapshot decoding uses it so a
// cold start with a million streams does not pay n path copies.
type pmapBuilder[K cmp.Ordered, V any] struct {
	spine []*pnode[K, V]
	n     int
	last  K
}

// add appends an entry; it reports false when keys are not strictly ascending.
func (b *pmapBuilder[K, V]) add(k K, v V) bool {
	if b.n > 0 && cmp.Compare(b.last, k) >= 0 {
		return false
	}
	node := &pnode[K, V]{key: k, val: v, prio: keyPrio(k)}
	var popped *pnode[K, V]
	for len(b.spine) > 0 && b.spine[len(b.spine)-1].prio < node.prio {
		popped = b.spine[len(b.spine)-1]
		b.spine = b.spine[:len(b.spine)-1]
	}
	node.left = popped
	if len(b.spine) > 0 {
		b.spine[len(b.spine)-1].right = node
	}
	b.spine = append(b.spine, node)
	b.n++
	b.last = k
	return true
}

func (b *pmapBuilder[K, V]) build() pmap[K, V] {
	if len(b.spine) == 0 {
		return pmap[K, V]{}
	}
	return pmap[K, V]{root: b.spine[0], n: b.n}
}

// keyPrio hashes a key to its treap priority (splitmix64 finaliser; FNV-1a
// for strings). Deterministic across processes and architectures.
func keyPrio[K cmp.Ordered](k K) uint64 {
	switch v := any(k).(type) {
	case uint64:
		return mix64(v)
	case uint32:
		return mix64(uint64(v))
	case string:
		h := uint64(14695981039346656037)
		for i := 0; i < len(v); i++ {
			h ^= uint64(v[i])
			h *= 1099511628211
		}
		return mix64(h)
	default:
		panic("domain: pmap key type without a priority function")
	}
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
