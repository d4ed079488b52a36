package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
)

// CloseAll hands back every stream this process has open, for a clean
// shutdown: once no more appends arrive, it waits for each stream's records
// to be durable, commits them all to data objects, and closes the streams in
// one batch of commands. Any node can then open them without fencing or
// reading this process's WAL. A stream it cannot close stays open and is
// recovered from the WAL by whoever opens it next, so an error here loses
// nothing.
func (e *Engine) CloseAll(ctx context.Context) error {
	var streams []*stream
	for _, id := range e.Local() {
		if s, ok := e.local(id); ok && s.err() == nil {
			streams = append(streams, s)
		}
	}
	if len(streams) == 0 {
		return nil
	}
	for _, s := range streams {
		s.gate.Lock()
		next := s.next
		s.gate.Unlock()
		if err := s.waitConfirmed(ctx, next); err != nil {
			return err
		}
	}
	if _, err := e.Upload(ctx); err != nil {
		return err
	}
	var closes []domain.Command
	var closing []*stream
	for _, s := range streams {
		s.gate.Lock()
		done := s.committedThrough() >= s.next
		s.gate.Unlock()
		if done {
			closes = append(closes, &domain.CloseStream{By: e.cfg.By, Stream: s.id, Epoch: s.epoch})
			closing = append(closing, s)
		}
	}
	var errs []error
	for start := 0; start < len(closes); start += closeBatch {
		end := min(start+closeBatch, len(closes))
		if err := e.proposeCloses(ctx, closes[start:end], closing[start:end]); err != nil {
			errs = append(errs, err)
		}
	}
	if n := len(streams) - len(closing); n > 0 {
		errs = append(errs, fmt.Errorf("%d streams got appends during the handoff and stay open", n))
	}
	return errors.Join(errs...)
}

// closeBatch is how many CloseStream commands go in one proposal.
const closeBatch = 128

func (e *Engine) proposeCloses(ctx context.Context, closes []domain.Command, closing []*stream) error {
	rs, err := e.cfg.Plane.Propose(ctx, closes...)
	if err != nil {
		return err
	}
	var errs []error
	for i, r := range rs {
		if !r.OK() {
			errs = append(errs, fmt.Errorf("close stream %d: %s", closing[i].id, r))
			continue
		}
		e.mu.Lock()
		delete(e.streams, closing[i].id)
		e.mu.Unlock()
	}
	return errors.Join(errs...)
}
