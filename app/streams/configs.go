package streams

import (
	"sync/atomic"

	"github.com/picomq/pico/domain"
)

// configCache keeps the decoded configuration of recently read streams:
// every read and every wake of a live reader looks its stream up, and
// decoding anew each time allocates (the content type) for the garbage
// collector to sweep. A view's stream meta is never changed in place (a
// change of configuration sets a new slice), so an entry holding the very
// slice a view holds is that slice's decoding.
type configCache struct {
	slots [configSlots]atomic.Pointer[decodedConfig]
}

// configSlots bounds the cache: a stream's entry is replaced by that of
// another whose id falls in its slot.
const configSlots = 1024

type decodedConfig struct {
	id   uint64
	meta []byte
	cfg  domain.StreamConfig
}

// decode is domain.DecodeStreamConfig(meta) for stream id.
func (c *configCache) decode(id uint64, meta []byte) (domain.StreamConfig, error) {
	if len(meta) == 0 {
		return domain.DecodeStreamConfig(meta) // allocates nothing
	}
	slot := &c.slots[id%configSlots]
	if d := slot.Load(); d != nil && d.id == id && len(d.meta) == len(meta) && &d.meta[0] == &meta[0] {
		return d.cfg, nil
	}
	cfg, err := domain.DecodeStreamConfig(meta)
	if err == nil {
		slot.Store(&decodedConfig{id: id, meta: meta, cfg: cfg})
	}
	return cfg, err
}
