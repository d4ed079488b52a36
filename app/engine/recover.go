package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// pendingRecovery is an open whose recovery is to be done: the stream as it
// was before, the epoch it was opened at, the earlier writers whose WALs
// must be fenced and read, and how many of them were read and what they
// held (the fenced WAL's cache hands each stream's frames out once).
type pendingRecovery struct {
	prev    domain.Stream
	epoch   uint64
	sources []domain.Proposer
	read    int
	frames  []domain.Frame
}

// recoverySources lists the WALs a takeover of st reads, oldest first: the
// writers st lists as unrecovered (they died while recovering, or before
// recording it), then its own writer unless that one closed it cleanly.
// OpenStream lists the same writer in the metadata (withUnrecovered) but
// for one that closed the stream and then died: its records are committed,
// and reading its WAL anyway costs only reads.
func recoverySources(st *domain.Stream, fenceWriter bool) []domain.Proposer {
	sources := slices.Clone(st.Unrecovered)
	writer := domain.Proposer{Node: st.Owner, Epoch: st.OwnerEpoch}
	if fenceWriter && writer.Node != 0 && writer.Epoch != 0 && !slices.Contains(sources, writer) {
		sources = append(sources, writer)
	}
	return sources
}

// recoverOrRemember recovers an opened stream, or remembers the recovery
// for the next open if it fails.
func (e *Engine) recoverOrRemember(ctx context.Context, p pendingRecovery) error {
	if err := e.recover(ctx, &p); err != nil {
		e.remember(p)
		return err
	}
	e.mu.Lock()
	delete(e.closing, p.prev.ID)
	e.mu.Unlock()
	return nil
}

func (e *Engine) remember(p pendingRecovery) {
	e.mu.Lock()
	e.recovering[p.prev.ID] = p
	e.mu.Unlock()
}

// committedStream is stream st at epoch as its data objects hold it: its
// committed end, seal, producer state and writer sequence.
func (e *Engine) committedStream(ctx context.Context, st *domain.Stream, epoch uint64) (*stream, error) {
	s := newStream(st.ID, epoch, st.End)
	s.write.Sealed, s.write.Closer = st.Sealed, st.Closer
	s.closed = st.Sealed // recorded, since the view says so
	sec, err := e.lastSection(ctx, st)
	switch {
	case err == nil:
		s.loadSection(sec)
	case st.End == st.Start && (errors.Is(err, errNoLastObject) || errors.Is(err, ports.ErrNotFound)):
		// Nothing committed, or trimmed to empty by a trim that did not
		// keep the last object (logged before trims did; its bytes may
		// be collected): there is no state to restore.
	default:
		return nil, err
	}
	return s, nil
}

// reopenOwn makes local a stream this process is already the writer of. If
// the stream still lists earlier writers as unrecovered, an open of ours
// applied whose recovery this process no longer remembers: it is done now.
func (e *Engine) reopenOwn(ctx context.Context, st *domain.Stream) error {
	if len(st.Unrecovered) > 0 {
		return e.recoverOrRemember(ctx, pendingRecovery{prev: *st, epoch: st.Epoch, sources: slices.Clone(st.Unrecovered)})
	}
	s, err := e.committedStream(ctx, st, st.Epoch)
	if err != nil {
		return fmt.Errorf("engine: reopen stream %d: %w", st.ID, err)
	}
	e.handoff.RLock()
	defer e.handoff.RUnlock()
	if e.handingOff {
		return errHandingOff
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.streams[st.ID]; !ok {
		e.publish(s)
	}
	return nil
}

// errHandingOff: CloseAll hands back the streams this process writes, and
// closes those not in memory from the metadata, so none is reopened here.
var errHandingOff = fmt.Errorf("%w: this process is handing its streams back", ErrNotLocal)

// recover rebuilds a stream opened at p.epoch from the WALs of its earlier
// writers (p.sources). What it reads there stays in p, for a retry if a
// later step fails.
func (e *Engine) recover(ctx context.Context, p *pendingRecovery) error {
	prev, epoch := &p.prev, p.epoch
	s, err := e.committedStream(ctx, prev, epoch)
	if err != nil {
		return fmt.Errorf("engine: recover stream %d: %w", prev.ID, err)
	}
	if err := e.readSources(ctx, p); err != nil {
		return err
	}
	v := e.cfg.Plane.View()
	recovered := s.load(supersede(p.frames, &v, prev))
	if err := e.rewrite(ctx, s, recovered); err != nil {
		return err
	}
	if err := e.recordRecoveredSeal(ctx, s); err != nil {
		return err
	}
	e.charge(s.records[prev.End-s.base:]) // their commit releases them
	// Read before s is published: appends then move it, under its gate.
	next := s.write.Next
	e.mu.Lock()
	e.publish(s)
	e.mu.Unlock()
	// Durability point of the recovery: the recovered frames, producer
	// stamps and writer sequences included, are in this process's WAL.
	if len(p.sources) > 0 {
		e.recorded(ctx, prev.ID, epoch)
	}
	if next > prev.End {
		// Committing now lets this process retire the rewritten frames
		// and puts the whole producer state in one section. Failing
		// leaves them in the WAL, where a takeover finds them: only log.
		if err := (Handle{e: e, s: s}).CommitThrough(ctx, next); err != nil {
			e.cfg.Logger.Warn("committing recovered records failed", "stream", prev.ID, "err", err)
		}
	}
	e.cfg.Logger.Debug("stream opened", "stream", prev.ID, "epoch", epoch, "recovered", next-prev.End)
	return nil
}

// recordRecoveredSeal records the seal a recovered frame carries: its
// append sealed the stream, and its own record of the seal failed or was
// never made. It goes before s is published, so that no reader sees the
// frame's records without the closure.
func (e *Engine) recordRecoveredSeal(ctx context.Context, s *stream) error {
	if !s.write.Sealed || s.closed {
		return nil
	}
	if err := e.recordSeal(ctx, s); err != nil {
		return fmt.Errorf("engine: recover stream %d: record its seal: %w", s.id, err)
	}
	return nil
}

// readSources fences and reads the WALs of p's earlier writers, oldest
// first (a later writer's frames continue, or repeat as it rewrote them, an
// earlier one's, and load skips what it has), keeping what it read in p.
func (e *Engine) readSources(ctx context.Context, p *pendingRecovery) error {
	for ; p.read < len(p.sources); p.read++ {
		frames, err := e.predecessorFrames(ctx, p.sources[p.read], p.prev.ID)
		if err != nil {
			return fmt.Errorf("engine: recover stream %d: %w", p.prev.ID, err)
		}
		p.frames = append(p.frames, frames...)
	}
	return nil
}

// recorded records that stream id's recovery at epoch is durable, so a
// later takeover need not read the earlier writers' WALs. Failing leaves
// them listed, which costs that takeover reads, not records.
func (e *Engine) recorded(ctx context.Context, id, epoch uint64) {
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.RecoveredStream{By: e.cfg.By, Stream: id, Epoch: epoch})
	if err != nil || (r.Code != domain.ResultOK && r.Code != domain.ResultRedundant) {
		e.cfg.Logger.Warn("recording a recovery failed", "stream", id, "result", r, "err", err)
	}
}

// rewrite makes recovered frames durable in this process's own WAL, one
// for one at this epoch, each with its producer stamp and writer sequence,
// so the next takeover finds everything the predecessors held here. They
// go in one bulk: a takeover that finds any of them at this epoch takes
// this epoch to have recovered everything (supersede), so a crash must
// leave all of them or none.
func (e *Engine) rewrite(ctx context.Context, s *stream, frames []domain.Frame) error {
	if len(frames) == 0 {
		return nil
	}
	rewritten := make([]*domain.Frame, len(frames))
	for i := range frames {
		f := frames[i]
		f.Epoch = s.epoch
		rewritten[i] = &f
	}
	done := make(chan error, 1)
	if err := e.cfg.WAL.SubmitAll(func(err error) { done <- err }, rewritten...); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fencedWAL is a fenced process's WAL, grouped by stream. It cannot change
// any more, so it is read once; a stream's frames are dropped once that
// stream is recovered, and the whole entry with the last one.
type fencedWAL struct {
	byStream map[uint64][]domain.Frame
	// tails is, per stream, the end of its last frame: what a takeover of
	// it could recover up to. It stays as frames are handed out.
	tails map[uint64]uint64
}

// predecessorFrames fences the WAL of process prev (on first use) and
// returns its frames of stream id, in order.
func (e *Engine) predecessorFrames(ctx context.Context, prev domain.Proposer, id uint64) ([]domain.Frame, error) {
	e.fencing.Lock()
	defer e.fencing.Unlock()
	w, err := e.fencedLocked(ctx, prev)
	if err != nil {
		return nil, err
	}
	frames := w.byStream[id]
	e.dropFencedLocked(prev, w, id)
	return frames, nil
}

// fencedLocked returns prev's fenced WAL, fencing and reading it if it is
// not cached. Under e.fencing.
func (e *Engine) fencedLocked(ctx context.Context, prev domain.Proposer) (*fencedWAL, error) {
	if w, ok := e.fenced[prev]; ok {
		return w, nil
	}
	frames, err := wal.Fence(ctx, e.cfg.WAL.Store(), prev.Node, prev.Epoch, e.cfg.By)
	if err != nil {
		return nil, err
	}
	w := &fencedWAL{byStream: map[uint64][]domain.Frame{}, tails: map[uint64]uint64{}}
	for _, f := range frames {
		w.byStream[f.Stream] = append(w.byStream[f.Stream], f)
		w.tails[f.Stream] = max(w.tails[f.Stream], f.End())
	}
	e.fenced[prev] = w
	return w, nil
}

// dropFencedLocked forgets prev's frames of stream id, and prev's WAL once
// no stream's frames are left. Under e.fencing.
func (e *Engine) dropFencedLocked(prev domain.Proposer, w *fencedWAL, id uint64) {
	delete(w.byStream, id)
	if len(w.byStream) == 0 {
		delete(e.fenced, prev)
	}
}

// lastSection returns the stream's section of the data object holding its
// last committed record (kept when a trim takes every record): it carries
// the producer state and writer sequence as of End.
func (e *Engine) lastSection(ctx context.Context, st *domain.Stream) (domain.Section, error) {
	v := e.cfg.Plane.View()
	obj, ok := v.LastObject(st)
	if !ok {
		return domain.Section{}, fmt.Errorf("%w: stream %d, offset %d", errNoLastObject, st.ID, st.End-1)
	}
	_, sec, err := e.readSection(ctx, obj.ID, st.ID)
	if err != nil {
		return domain.Section{}, fmt.Errorf("engine: read stream %d's last section: %w", st.ID, err)
	}
	return sec, nil
}

var errNoLastObject = errors.New("engine: no object holds the stream's last record")
