package engine

import (
	"context"
	"errors"
)

// ErrEnding: the stream is being closed or deleted here, with the outcome
// not known yet; Handle.AwaitSettled waits for it, and the caller opens
// the stream again.
var ErrEnding = errors.New("engine: stream being closed or deleted here")

// beginEnding marks s as ending, before the proposal that closes or
// deletes it is sent: from its commit on, a process that reads the log
// may find the stream gone or another's, and a read here that answered
// from s afterwards would contradict it. The caller holds s's gate.
func (s *stream) beginEnding() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ending = make(chan struct{})
}

// endEnding ends the mark, once the outcome is applied to s (let go or
// failed on success, as it was otherwise), and wakes the readers waiting.
func (s *stream) endEnding() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending != nil {
		close(s.ending)
		s.ending = nil
	}
}

// AwaitSettled waits while the stream is ending here (ErrEnding), for at
// most ctx; then the handle's calls answer as the outcome left it.
func (h Handle) AwaitSettled(ctx context.Context) error {
	s := h.s
	s.mu.Lock()
	ending := s.ending
	s.mu.Unlock()
	if ending == nil {
		return nil
	}
	select {
	case <-ending:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
