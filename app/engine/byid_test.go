package engine

import (
	"context"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// byID is the handle of stream id as the tests name it: the stream open
// here, or one that answers ErrNotLocal, as a handle let go does.
func (e *Engine) byID(id uint64) Handle {
	if s, ok := e.local(id); ok {
		return Handle{e: e, s: s}
	}
	gone := newStream(id, 0, 0)
	gone.failed = ErrNotLocal
	return Handle{e: e, s: gone}
}

// appendRecords appends records with an optional producer stamp.
func (h Handle) appendRecords(ctx context.Context, records []domain.Record, p *domain.ProducerStamp) (ports.AppendResult, error) {
	return h.Append(ctx, ports.AppendRequest{Records: records, Producer: p})
}
