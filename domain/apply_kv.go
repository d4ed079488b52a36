package domain

func (s *State) applyKV(c Command) Result {
	switch c := c.(type) {
	case *PutKV:
		return s.putKV(c.Space, c.Key, c.Value, false, 0)
	case *PutKVIf:
		return s.putKV(c.Space, c.Key, c.Value, true, c.IfRev)
	case *DeleteKV:
		return s.deleteKV(c.Space, c.Key, false, 0)
	case *DeleteKVIf:
		return s.deleteKV(c.Space, c.Key, true, c.IfRev)
	}
	return reject(ResultInvalid, "not a key-value command")
}

func checkKey(space KVSpace, key string) (Result, bool) {
	if space != SpaceRegistry && space != SpaceTokens {
		return reject(ResultInvalid, "unknown key space %d", space), false
	}
	if key == "" || len(key) > MaxKeyLen {
		return reject(ResultInvalid, "key must be 1..%d bytes", MaxKeyLen), false
	}
	return Result{}, true
}

func (s *State) putKV(space KVSpace, key string, value []byte, conditional bool, ifRev uint64) Result {
	if r, valid := checkKey(space, key); !valid {
		return r
	}
	if len(value) > MaxValueLen {
		return reject(ResultInvalid, "value longer than %d bytes", MaxValueLen)
	}
	k := kvKey(space, key)
	cur, present := s.kv.Get(k)
	if conditional && ((ifRev == 0 && present) || (ifRev != 0 && (!present || cur.Rev != ifRev))) {
		return Result{Code: ResultRevMismatch, Value: cur.Rev, Reason: "revision differs"}
	}
	s.kv = s.kv.Set(k, KVEntry{Value: value, Rev: s.Applied})
	return ok(s.Applied)
}

func (s *State) deleteKV(space KVSpace, key string, conditional bool, ifRev uint64) Result {
	if r, valid := checkKey(space, key); !valid {
		return r
	}
	k := kvKey(space, key)
	cur, present := s.kv.Get(k)
	switch {
	case !present && conditional:
		return reject(ResultNotFound, "key does not exist")
	case !present:
		return redundant(0)
	case conditional && cur.Rev != ifRev:
		return Result{Code: ResultRevMismatch, Value: cur.Rev, Reason: "revision differs"}
	}
	s.kv = s.kv.Delete(k)
	return ok(cur.Rev)
}
