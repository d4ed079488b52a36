package engine

import (
	"context"
	"fmt"

	"github.com/picomq/pico/domain"
)

// Delete removes stream id: its name is free at once, its data objects
// become garbage, and its WAL frames count as covered. A stream open on
// another live process is refused (ErrNotOwner): delete it there.
func (e *Engine) Delete(ctx context.Context, id uint64) error {
	if s, ok := e.local(id); ok {
		s.gate.Lock()
		defer s.gate.Unlock()
		if err := s.waitConfirmed(ctx, s.write.Next); err != nil && s.err() == nil {
			return err
		}
		s.beginEnding()
		defer s.endEnding()
		return e.proposeDelete(ctx, id, s.epoch, s)
	}
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok {
		return ErrNotFound
	}
	return e.proposeDelete(ctx, id, st.Epoch, nil)
}

func (e *Engine) proposeDelete(ctx context.Context, id, epoch uint64, s *stream) error {
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.DeleteStream{By: e.cfg.By, Stream: id, Epoch: epoch})
	if err != nil {
		return err
	}
	switch r.Code {
	case domain.ResultOK:
	case domain.ResultNotFound:
		return ErrNotFound
	case domain.ResultNotClosed:
		return fmt.Errorf("%w: %s", ErrNotOwner, r.Reason)
	default:
		return fmt.Errorf("engine: delete stream %d: %s", id, r)
	}
	if s != nil {
		e.mu.Lock()
		e.unpublish(s)
		e.mu.Unlock()
		s.mu.Lock()
		pending := recordsSize(s.records[s.committed-s.base:])
		s.failed = ErrNotFound // late readers of the dropped state see it gone
		s.mu.Unlock()
		s.wake()
		e.release(pending)
	}
	return nil
}
