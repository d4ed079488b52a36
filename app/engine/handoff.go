package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
)

// CloseAll hands back every stream this process has open, for a clean
// shutdown: once no more appends arrive, it waits for each stream's records
// to be durable, commits them all to data objects, and closes the streams in
// one batch of commands. Any node can then open them without fencing or
// reading this process's WAL. A stream it cannot close stays open and is
// recovered from the WAL by whoever opens it next, so an error here loses
// nothing. Recoveries left unfinished by a failed open are finished first,
// so those streams close too and the next writer reads no WAL at all (the
// metadata lists their predecessors, so nothing is lost if this fails).
func (e *Engine) CloseAll(ctx context.Context) error {
	e.handoff.Lock()
	e.handingOff = true
	e.handoff.Unlock()
	e.finishRecoveries(ctx)
	local := e.closeLocal(ctx)
	return errors.Join(local, e.closeReleased(ctx))
}

// closeLocal closes the streams in memory (see CloseAll).
func (e *Engine) closeLocal(ctx context.Context) error {
	var streams []*stream
	for _, id := range e.Local() {
		if s, ok := e.local(id); ok && s.err() == nil {
			streams = append(streams, s)
		}
	}
	if len(streams) == 0 {
		return nil
	}
	slices.SortFunc(streams, func(a, b *stream) int { return cmp.Compare(a.id, b.id) }) // gates are locked in id order
	start := time.Now()
	for _, s := range streams {
		s.gate.Lock()
		next := s.write.Next
		s.gate.Unlock()
		if err := s.waitConfirmed(ctx, next); err != nil {
			return err
		}
	}
	durable := time.Since(start)
	if _, err := e.Upload(ctx); err != nil {
		return err
	}
	uploaded := time.Since(start)
	// Each batch is checked and closed under its streams' gates, so no
	// append gets in between the check and the close; the gates are
	// released only once the closed streams refuse appends.
	closing, errs := e.closeInBatches(ctx, streams)
	e.cfg.Logger.Info("streams handed back", "streams", closing, "durable_after", durable.Round(time.Millisecond),
		"uploaded_after", uploaded.Round(time.Millisecond), "closed_after", time.Since(start).Round(time.Millisecond))
	err := firstOf(errs, batches(len(streams), closeBatch), "close proposals")
	if n := len(streams) - closing; n > 0 {
		err = errors.Join(err, fmt.Errorf("%d streams got appends during the handoff and stay open", n))
	}
	return err
}

// firstOf is one error for errs, the failures of total tries of what: a
// handoff of a million streams whose log is down says so once.
func firstOf(errs []error, total int, what string) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%d of %d %s failed, the first: %w", len(errs), total, what, errs[0])
}

func batches(n, size int) int { return (n + size - 1) / size }

// closeReleased closes, from the metadata alone, the streams this process
// writes that are not in memory: released while idle, or opened at create
// and not used since. Every record of theirs is committed (releaseIfIdle)
// or there is none, and none is reopened here any more (handingOff), so a
// close in the view is all their handoff needs. A close costs the view a
// write per stream, so it closes what it can within releasedCloseBudget:
// a stream left open costs its next writer a look at this process's WAL,
// which holds nothing of it, and one metadata write, not a record.
// Streams with a recovery pending or a close in doubt are left to their
// next writer, which reads the WALs their metadata names.
func (e *Engine) closeReleased(ctx context.Context) error {
	v := e.cfg.Plane.View()
	var cmds []domain.Command
	e.mu.Lock()
	v.StreamsOf(e.cfg.By, func(st *domain.Stream) bool {
		_, local := e.streams[st.ID]
		_, recovering := e.recovering[st.ID]
		if !local && !recovering && !e.closing[st.ID] && len(st.Unrecovered) == 0 {
			cmds = append(cmds, &domain.CloseStream{By: e.cfg.By, Stream: st.ID, Epoch: st.Epoch})
		}
		return true
	})
	e.mu.Unlock()
	if len(cmds) == 0 {
		return nil
	}
	start := time.Now()
	budget := time.Now().Add(releasedCloseBudget)
	var closed, refused atomic.Int64
	errs := inBatches(cmds, 2*closeBatch, func(batch []domain.Command) error {
		if time.Now().After(budget) {
			return nil // left open: see above
		}
		rs, err := e.cfg.Plane.Propose(ctx, batch...)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.OK() {
				closed.Add(1)
			} else {
				refused.Add(1)
			}
		}
		return nil
	})
	e.cfg.Logger.Info("streams not in memory handed back", "closed", closed.Load(), "refused", refused.Load(),
		"left_to_their_next_writer", int64(len(cmds))-closed.Load()-refused.Load(), "after", time.Since(start).Round(time.Millisecond))
	return firstOf(errs, batches(len(cmds), 2*closeBatch), "close proposals")
}

// releasedCloseBudget bounds the closes of streams not in memory at a
// handoff (closeReleased).
var releasedCloseBudget = 2 * time.Second

// closeBatch is how many streams one proposal closes: with a SealStream
// each, 1024 commands, what one metadata row holds by default.
const closeBatch = 512

// closesInFlight bounds the close proposals sent side by side: the log
// commits concurrent proposals together, so a node with a million streams
// hands them back in seconds, not in one round trip a batch.
const closesInFlight = 16

// closeInBatches closes streams closeBatch at a time, closesInFlight
// batches at once; it returns how many it tried to close and the errors.
func (e *Engine) closeInBatches(ctx context.Context, streams []*stream) (int, []error) {
	var closing atomic.Int64
	errs := inBatches(streams, closeBatch, func(batch []*stream) error {
		n, err := e.closeCommitted(ctx, batch)
		closing.Add(int64(n))
		return err
	})
	return int(closing.Load()), errs
}

// inBatches runs fn on items, size at a time, closesInFlight batches at
// once, and returns their errors.
func inBatches[T any](items []T, size int, fn func([]T) error) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	slots := make(chan struct{}, closesInFlight)
	for batch := range slices.Chunk(items, size) {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := fn(batch); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// closeCommitted closes those of streams whose every record is committed,
// holding their gates throughout; it returns how many it tried to close.
func (e *Engine) closeCommitted(ctx context.Context, streams []*stream) (int, error) {
	for _, s := range streams {
		s.gate.Lock()
		defer s.gate.Unlock()
	}
	var closing []*stream
	for _, s := range streams {
		if s.committedThrough() >= s.write.Next {
			closing = append(closing, s)
		}
	}
	if len(closing) == 0 {
		return 0, nil
	}
	return len(closing), e.proposeCloses(ctx, closing)
}

// proposeCloses closes streams whose records are all committed, in one
// proposal, and lets go of those it closed. The caller holds their gates.
func (e *Engine) proposeCloses(ctx context.Context, closing []*stream) error {
	var cmds []domain.Command
	sealing := make([]bool, len(closing)) // a SealStream goes just before the stream's CloseStream
	for _, s := range closing {
		s.beginEnding()
		defer s.endEnding()
	}
	for i, s := range closing {
		if sealing[i] = e.sealUnrecorded(s); sealing[i] {
			cmds = append(cmds, sealCommand(e.cfg.By, s))
		}
		cmds = append(cmds, &domain.CloseStream{By: e.cfg.By, Stream: s.id, Epoch: s.epoch})
	}
	rs, err := e.cfg.Plane.Propose(ctx, cmds...)
	if err != nil {
		for _, s := range closing {
			e.dropInDoubt(s)
		}
		return fmt.Errorf("close streams: %w", err)
	}
	var errs []error
	for i, s := range closing {
		sealed := true
		if sealing[i] {
			seal := rs[0]
			if rs, sealed = rs[1:], seal.OK(); !sealed {
				errs = append(errs, fmt.Errorf("seal stream %d: %s", s.id, seal))
			}
		}
		r := rs[0]
		rs = rs[1:]
		if !r.OK() {
			errs = append(errs, fmt.Errorf("close stream %d: %s", s.id, r))
			continue
		}
		s.sealClosed = s.write.Sealed && sealed
		e.forget(s)
	}
	return errors.Join(errs...)
}

// sealUnrecorded reports whether an append sealed s but has not recorded
// the seal yet: it does so only once its records are durable, outside the
// gate, and a close that takes the gate first records the seal itself, so
// that it is not lost with the close and the append, its records written,
// is not refused (recordSeal checks sealClosed). The caller holds s's gate.
func (e *Engine) sealUnrecorded(s *stream) bool {
	if !s.write.Sealed {
		return false
	}
	v := e.cfg.Plane.View()
	st, ok := v.Stream(s.id)
	return !ok || !st.Sealed
}

// dropInDoubt forgets a stream whose close had an unknown outcome. The close
// may yet apply, and then an append acknowledged meanwhile would be in this
// process's WAL only, which the next owner of a cleanly closed stream does
// not read. So the stream takes no appends as if the close had applied,
// and its next open here is at a new epoch, which makes a pending close
// stale. The caller holds its gate.
func (e *Engine) dropInDoubt(s *stream) {
	e.mu.Lock()
	e.closing[s.id] = true
	e.mu.Unlock()
	e.forget(s)
}

// forget lets go of local stream s: a stream this process closed, or one
// released while idle. The caller holds its gate: an append that looked
// the stream up before is refused from now on (for a closed stream, its
// record would be in this process's WAL only, which the next owner of a
// cleanly closed stream does not read), and waiting readers are woken to
// open it again.
func (e *Engine) forget(s *stream) {
	e.mu.Lock()
	e.unpublish(s)
	e.mu.Unlock()
	s.mu.Lock()
	if s.failed == nil {
		s.failed = ErrNotLocal
	}
	s.mu.Unlock()
	s.wake()
}

// finishRecoveries retries the recoveries failed opens left, so that their
// streams can be handed back like the others.
func (e *Engine) finishRecoveries(ctx context.Context) {
	e.mu.Lock()
	ids := slices.Collect(maps.Keys(e.recovering))
	e.mu.Unlock()
	for _, id := range ids {
		if _, err := e.Open(ctx, id); err != nil {
			e.cfg.Logger.Warn("finishing a stream's recovery before the handoff failed; whoever opens it next recovers it",
				"stream", id, "err", err)
		}
	}
}
