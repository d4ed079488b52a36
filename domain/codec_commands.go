package domain

// Field order here is the wire format: append new fields only through a new
// command code, never by editing these.

func (c *RegisterNode) encode(e *encoder) {
	e.node(c.Node)
	e.uvarint(c.Epoch)
	e.str(c.Address)
	e.uvarint(uint64(c.Slots))
	e.varint(c.NowMs)
}

func (c *RegisterNode) decode(d *decoder) {
	c.Node, c.Epoch, c.Address = d.node(), d.uvarint(), d.str()
	c.Slots, c.NowMs = d.u32(), d.varint()
}

func (c *SetSlots) encode(e *encoder) { e.proposer(c.By); e.node(c.Node); e.uvarint(uint64(c.Slots)) }
func (c *SetSlots) decode(d *decoder) { c.By, c.Node, c.Slots = d.proposer(), d.node(), d.u32() }

func (c *CreateStream) encode(e *encoder) {
	e.proposer(c.By)
	e.str(c.Name)
	e.bytes(c.Meta)
	e.boolean(c.Open)
	e.varint(c.NowMs)
}

func (c *CreateStream) decode(d *decoder) {
	c.By, c.Name, c.Meta = d.proposer(), d.str(), d.bytes()
	c.Open, c.NowMs = d.boolean(), d.varint()
}

func (c *PlaceStream) encode(e *encoder) {
	e.proposer(c.By)
	e.str(c.Name)
	e.bytes(c.Meta)
	e.boolean(c.Content)
	e.varint(c.NowMs)
}

func (c *PlaceStream) decode(d *decoder) {
	c.By, c.Name, c.Meta = d.proposer(), d.str(), d.bytes()
	c.Content, c.NowMs = d.boolean(), d.varint()
}

func (c *CreateFork) encode(e *encoder) {
	e.proposer(c.By)
	e.str(c.Name)
	e.bytes(c.Meta)
	e.uvarint(c.Source)
	e.uvarint(c.At)
	e.varint(c.NowMs)
}

func (c *CreateFork) decode(d *decoder) {
	c.By, c.Name, c.Meta = d.proposer(), d.str(), d.bytes()
	c.Source, c.At, c.NowMs = d.uvarint(), d.uvarint(), d.varint()
}

func (c *OpenStream) encode(e *encoder) { encodeStreamEpoch(e, c.By, c.Stream, c.Epoch) }
func (c *OpenStream) decode(d *decoder) { c.By, c.Stream, c.Epoch = decodeStreamEpoch(d) }

func (c *CloseStream) encode(e *encoder) { encodeStreamEpoch(e, c.By, c.Stream, c.Epoch) }
func (c *CloseStream) decode(d *decoder) { c.By, c.Stream, c.Epoch = decodeStreamEpoch(d) }

func (c *SealStream) encode(e *encoder) { encodeStreamEpoch(e, c.By, c.Stream, c.Epoch) }
func (c *SealStream) decode(d *decoder) { c.By, c.Stream, c.Epoch = decodeStreamEpoch(d) }

func (c *SealStreamBy) encode(e *encoder) {
	encodeStreamEpoch(e, c.By, c.Stream, c.Epoch)
	e.stamp(c.Closer)
}

func (c *SealStreamBy) decode(d *decoder) {
	c.By, c.Stream, c.Epoch = decodeStreamEpoch(d)
	c.Closer = d.stamp()
}

func (c *RecoveredStream) encode(e *encoder) { encodeStreamEpoch(e, c.By, c.Stream, c.Epoch) }
func (c *RecoveredStream) decode(d *decoder) { c.By, c.Stream, c.Epoch = decodeStreamEpoch(d) }

func (c *DeleteStream) encode(e *encoder) { encodeStreamEpoch(e, c.By, c.Stream, c.Epoch) }
func (c *DeleteStream) decode(d *decoder) { c.By, c.Stream, c.Epoch = decodeStreamEpoch(d) }

func (c *CompleteTransfer) encode(e *encoder) { encodeStreamEpoch(e, c.By, c.Stream, c.Epoch) }
func (c *CompleteTransfer) decode(d *decoder) { c.By, c.Stream, c.Epoch = decodeStreamEpoch(d) }

func (c *SetStreamMeta) encode(e *encoder) {
	encodeStreamEpoch(e, c.By, c.Stream, c.Epoch)
	e.bytes(c.Meta)
}

func (c *SetStreamMeta) decode(d *decoder) {
	c.By, c.Stream, c.Epoch = decodeStreamEpoch(d)
	c.Meta = d.bytes()
}

// TrimStream's KeepLast is a trailing byte present only when true, so trims
// encoded before it existed decode unchanged.
func (c *TrimStream) encode(e *encoder) {
	encodeStreamEpoch(e, c.By, c.Stream, c.Epoch)
	e.uvarint(c.Start)
	if c.KeepLast {
		e.boolean(true)
	}
}

func (c *TrimStream) decode(d *decoder) {
	c.By, c.Stream, c.Epoch = decodeStreamEpoch(d)
	c.Start = d.uvarint()
	if d.err == nil && len(d.buf) > 0 {
		if c.KeepLast = d.boolean(); !c.KeepLast {
			d.fail("KeepLast written as false")
		}
	}
}

func encodeStreamEpoch(e *encoder, by Proposer, stream, epoch uint64) {
	e.proposer(by)
	e.uvarint(stream)
	e.uvarint(epoch)
}

func decodeStreamEpoch(d *decoder) (Proposer, uint64, uint64) {
	return d.proposer(), d.uvarint(), d.uvarint()
}

func (c *ReserveObjects) encode(e *encoder) {
	e.proposer(c.By)
	e.uvarint(uint64(c.Count))
	e.varint(c.TTLMs)
	e.varint(c.NowMs)
}

func (c *ReserveObjects) decode(d *decoder) {
	c.By, c.Count, c.TTLMs, c.NowMs = d.proposer(), d.u32(), d.varint(), d.varint()
}

func (o *ObjectSpec) encode(e *encoder) {
	e.uvarint(o.ID)
	e.uvarint(o.Size)
	e.uvarint(uint64(len(o.Ranges)))
	for _, r := range o.Ranges {
		e.uvarint(r.Stream)
		e.uvarint(r.Epoch)
		e.uvarint(r.Start)
		e.uvarint(r.End)
	}
}

func (o *ObjectSpec) decode(d *decoder) {
	o.ID, o.Size = d.uvarint(), d.uvarint()
	n := d.count(4)
	if n == 0 {
		o.Ranges = nil
		return
	}
	o.Ranges = make([]Range, n)
	for i := range o.Ranges {
		o.Ranges[i] = Range{Stream: d.uvarint(), Epoch: d.uvarint(), Start: d.uvarint(), End: d.uvarint()}
	}
}

func (c *CommitObjects) encode(e *encoder) {
	e.proposer(c.By)
	e.uvarint(uint64(len(c.Objects)))
	for i := range c.Objects {
		c.Objects[i].encode(e)
	}
	e.varint(c.NowMs)
}

func (c *CommitObjects) decode(d *decoder) {
	c.By = d.proposer()
	if n := d.count(3); n > 0 {
		c.Objects = make([]ObjectSpec, n)
		for i := range c.Objects {
			c.Objects[i].decode(d)
		}
	}
	c.NowMs = d.varint()
}

func (c *CompactObjects) encode(e *encoder) {
	e.proposer(c.By)
	c.Object.encode(e)
	e.ids(c.Replaces)
	e.varint(c.NowMs)
}

func (c *CompactObjects) decode(d *decoder) {
	c.By = d.proposer()
	c.Object.decode(d)
	c.Replaces, c.NowMs = d.ids(), d.varint()
}

func (c *StartTransfer) encode(e *encoder) { e.proposer(c.By); e.uvarint(c.Stream); e.node(c.To) }
func (c *StartTransfer) decode(d *decoder) {
	c.By, c.Stream, c.To = d.proposer(), d.uvarint(), d.node()
}

func (c *ExpireReservations) encode(e *encoder) { e.proposer(c.By); e.varint(c.NowMs) }
func (c *ExpireReservations) decode(d *decoder) { c.By, c.NowMs = d.proposer(), d.varint() }

func (c *DestroyObjects) encode(e *encoder) { e.proposer(c.By); e.ids(c.IDs) }
func (c *DestroyObjects) decode(d *decoder) { c.By, c.IDs = d.proposer(), d.ids() }

func (c *PutKV) encode(e *encoder) { encodeKV(e, c.By, c.Space, c.Key); e.bytes(c.Value) }
func (c *PutKV) decode(d *decoder) { c.By, c.Space, c.Key = decodeKV(d); c.Value = d.bytes() }

func (c *PutKVIf) encode(e *encoder) {
	encodeKV(e, c.By, c.Space, c.Key)
	e.bytes(c.Value)
	e.uvarint(c.IfRev)
}

func (c *PutKVIf) decode(d *decoder) {
	c.By, c.Space, c.Key = decodeKV(d)
	c.Value, c.IfRev = d.bytes(), d.uvarint()
}

func (c *DeleteKV) encode(e *encoder) { encodeKV(e, c.By, c.Space, c.Key) }
func (c *DeleteKV) decode(d *decoder) { c.By, c.Space, c.Key = decodeKV(d) }

func (c *DeleteKVIf) encode(e *encoder) { encodeKV(e, c.By, c.Space, c.Key); e.uvarint(c.IfRev) }
func (c *DeleteKVIf) decode(d *decoder) { c.By, c.Space, c.Key = decodeKV(d); c.IfRev = d.uvarint() }

func (c *FenceNode) encode(e *encoder) { e.proposer(c.By); e.node(c.Node); e.uvarint(c.Epoch) }
func (c *FenceNode) decode(d *decoder) { c.By, c.Node, c.Epoch = d.proposer(), d.node(), d.uvarint() }

func encodeKV(e *encoder, by Proposer, space KVSpace, key string) {
	e.proposer(by)
	e.u8(uint8(space))
	e.str(key)
}

func decodeKV(d *decoder) (Proposer, KVSpace, string) {
	return d.proposer(), KVSpace(d.u8()), d.str()
}
