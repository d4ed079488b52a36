package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/picomq/pico/app/broken"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Append writes req to the stream, as the write
// rules (domain.WriteState.Decide) judge it, and returns once its records
// are durable, or once the WAL has failed them: neither that wait nor the
// one for a seal's record ends with ctx (see below). A refusal is the
// *ports.StreamError of its kind. ctx bounds the other waits: for room
// before the records are submitted, and for the original of a duplicate
// (or the records before a bare seal), whose outcome is someone else's to
// learn. The verdict, offsets and timestamp are decided under the
// stream's gate; the wait for durability happens outside it.
//
// A producer's dedup state travels in the same WAL frame as its records,
// so it is durable exactly when they are. A seal is decided under the
// gate, so no later append gets in, and is recorded in the metadata
// (SealStreamBy) once the records are durable; the append returns after
// that. Readers see the sealing append's records only once the seal is
// recorded, together with the closure, so a reader waiting at the tail
// learns both in one answer. The frame says it seals (Frame.Seals), so
// the records and the closure are one write: should the record fail,
// the records stay hidden, and the seal is recorded by the next of the
// upload that commits them (in the same proposal), a close, a request
// judged on the seal (awaitJudged) or a takeover that finds the frame.
// The record is not given up when the caller leaves, for at most
// AppendTimeout: the records are durable by then.
func (h Handle) Append(ctx context.Context, req ports.AppendRequest) (ports.AppendResult, error) {
	e, s, records := h.e, h.s, req.Records
	if err := e.keysReadable(records); err != nil {
		return ports.AppendResult{}, err
	}
	if err := e.reserve(ctx, records); err != nil {
		return ports.AppendResult{}, err
	}
	v, done, err := e.submit(s, req, time.Now().Add(e.cfg.AppendTimeout))
	if err != nil || !v.Written() || len(records) == 0 {
		e.release(recordsSize(records)) // nothing was written
	}
	if err != nil {
		return ports.AppendResult{}, err
	}
	res, err := ports.AppendOutcome(req, v, nil)
	if err != nil {
		// A refusal judged records or a seal that may still be in flight:
		// it is the answer only once they are durable.
		if werr := e.awaitJudged(ctx, s, v, v.Tail); werr != nil {
			return ports.AppendResult{}, werr
		}
		return res, err
	}
	if res.Duplicate || done == nil {
		// A repeat's original (or the records before a bare seal) may
		// still be in flight: answer once they are durable.
		err = e.awaitJudged(ctx, s, v, res.Next)
	} else if !broken.AckEarly() {
		err = e.awaitDurable(done)
	}
	if req.Close && !res.Duplicate && err == nil {
		sealCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.AppendTimeout)
		err = e.recordSeal(sealCtx, s)
		cancel()
	}
	return res, err
}

// awaitDurable waits for the WAL's answer on an append's frame, for at most
// AppendTimeout. Not for ctx: the append becomes durable or not whether or
// not its caller still waits, and a caller gone says nothing of it.
func (e *Engine) awaitDurable(done <-chan error) error {
	t := time.NewTimer(e.cfg.AppendTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("%w after %v: the object store has not stored it", ErrNotDurable, e.cfg.AppendTimeout)
	}
}

// awaitJudged waits, for at most AppendTimeout, until what verdict v was
// judged on is durable: the offsets below off and, when v saw the stream
// sealed, the seal's record in the metadata, which it makes itself once
// the sealing records are durable (the sealing append's own record may
// have failed; SealStreamBy is idempotent). An answer given earlier could
// be undone by the failure of what it saw.
func (e *Engine) awaitJudged(ctx context.Context, s *stream, v domain.Verdict, off uint64) error {
	ctx, cancel := context.WithTimeoutCause(ctx, e.cfg.AppendTimeout,
		fmt.Errorf("%w after %v: the records or seal it was judged on are not stored yet", ErrNotDurable, e.cfg.AppendTimeout))
	defer cancel()
	err := s.waitConfirmed(ctx, off)
	if err == nil && v.Closed && v.Outcome != domain.Accepted && s.sealAwaitsRecord() {
		err = e.recordSeal(ctx, s)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return context.Cause(ctx)
	}
	return err
}

// Refuse answers req, which the caller found unfit for the stream (its
// records or content type), with unfit, unless the write rules answer
// first: a closed stream says so whatever the request.
func (h Handle) Refuse(req ports.AppendRequest, unfit error) error {
	s := h.s
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.err(); err != nil {
		return err
	}
	v := s.write.Decide(req, true, 0)
	_, err := ports.AppendOutcome(req, v, unfit)
	return err
}

// submit judges req under s's gate and, if it writes records, hands their
// frame to the WAL: done then answers when it is durable. It waits for room
// in the WAL until deadline (zero: as long as it takes): under the gate,
// so that the appends queued behind it wait no longer than their own
// deadlines.
func (e *Engine) submit(s *stream, req ports.AppendRequest, deadline time.Time) (domain.Verdict, <-chan error, error) {
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.err(); err != nil {
		return domain.Verdict{}, nil, err
	}
	v := s.write.Decide(req, false, e.cfg.Now().UnixMilli())
	seals := v.Written() && req.Close && !s.write.Sealed
	if !v.Written() || len(req.Records) == 0 {
		if seals {
			s.mu.Lock()
			s.holdForSealLocked(v.First, req.Producer.Clone())
			s.mu.Unlock()
		}
		s.write.Accept(req, v)
		return v, nil, nil
	}
	recs := make([]domain.Record, len(req.Records))
	for i, r := range req.Records {
		r.TimestampMs = v.TimestampMs
		recs[i] = r
	}
	f := &domain.Frame{Stream: s.id, Epoch: s.epoch, Offset: v.First, Producer: req.Producer, WriterSeq: req.WriterSeq,
		Seals: seals && e.sealFrames(), Records: recs}
	done := make(chan error, 1)
	s.mu.Lock()
	s.records = append(s.records, recs...) // invisible until confirmed passes them
	if seals {
		s.holdForSealLocked(v.First, req.Producer.Clone()) // and, sealing, until the seal is recorded
	}
	s.mu.Unlock()
	if err := e.cfg.WAL.SubmitBy(deadline, f, func(err error) { e.durable(s, f, err); done <- err }); err != nil {
		if errors.Is(err, wal.ErrBacklog) { // nothing was submitted: the stream is as it was
			s.mu.Lock()
			s.records = s.records[:len(s.records)-len(recs)]
			s.sealPending = s.sealPending && !seals
			s.mu.Unlock()
			return domain.Verdict{}, nil, fmt.Errorf("%w: %w", ErrNotDurable, err)
		}
		e.durable(s, f, err)
		return domain.Verdict{}, nil, err
	}
	s.write.Accept(req, v)
	return v, done, nil
}

// sealFrames reports whether every node of the cluster reads the seal
// flag of WAL frames: older ones refuse frames that carry it.
func (e *Engine) sealFrames() bool {
	v := e.cfg.Plane.View()
	return v.ClusterLevel() >= domain.LevelSealFrames
}

// keysReadable refuses records with keys while a node of the cluster is of
// a release that cannot read them: until the upgrade completes, a client
// retrying after a 503 gets in.
func (e *Engine) keysReadable(records []domain.Record) error {
	if !domain.Keyed(records) {
		return nil
	}
	v := e.cfg.Plane.View()
	if level := v.ClusterLevel(); level < domain.LevelRecordKeys {
		return &ports.StreamError{Kind: ports.ErrUnavailable, Message: fmt.Sprintf(
			"records with keys need every node at feature level %d, and the cluster is at %d: finish the upgrade",
			domain.LevelRecordKeys, level)}
	}
	return nil
}

func (s *stream) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// waitDurable waits until offsets below off are durable and, if seal, the
// stream's seal is recorded.
func (s *stream) waitDurable(ctx context.Context, off uint64, seal bool) error {
	for {
		s.mu.Lock()
		confirmed, recorded, changed, failed := s.confirmed, s.closed, s.changedLocked(), s.failed
		s.mu.Unlock()
		switch {
		case confirmed >= off && (recorded || !seal):
			return nil
		case failed != nil:
			return failed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// charge counts records a recovery put in memory: not waiting for room (the
// takeover would otherwise wait on uploads of streams it has not opened),
// but asking for an upload when over the threshold, like reserve.
func (e *Engine) charge(records []domain.Record) {
	e.roomMu.Lock()
	e.countAndUnlock(recordsSize(records))
}

// countAndUnlock counts n more uncommitted bytes under roomMu, which the
// caller holds and it releases, and asks for an upload once they reach the
// threshold.
func (e *Engine) countAndUnlock(n int) {
	e.uncommitted += n
	over := e.uncommitted >= e.cfg.UploadThresholdBytes
	e.roomMu.Unlock()
	if over {
		e.requestUpload()
	}
}

// reserve waits until the records fit under MaxUncommittedBytes, then
// counts them: memory stays bounded when uploads fall behind appends.
func (e *Engine) reserve(ctx context.Context, records []domain.Record) error {
	n := recordsSize(records)
	for {
		e.roomMu.Lock()
		if e.uncommitted == 0 || e.uncommitted+n <= e.cfg.MaxUncommittedBytes {
			e.countAndUnlock(n)
			return nil
		}
		room := e.room
		e.roomMu.Unlock()
		e.requestUpload()
		if e.uploading.TryLock() {
			// No upload is running (there may be no maintenance loop at
			// all): make room here rather than wait for one.
			e.uploading.Unlock()
			if _, err := e.Upload(ctx); err != nil {
				e.cfg.Logger.Warn("upload to make room failed", "err", err)
			}
			continue
		}
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release returns committed (or never written) bytes to the budget.
func (e *Engine) release(n int) {
	e.roomMu.Lock()
	e.uncommitted = max(0, e.uncommitted-n)
	close(e.room)
	e.room = make(chan struct{})
	e.roomMu.Unlock()
}

func (e *Engine) requestUpload() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

func recordsSize(records []domain.Record) int {
	f := domain.Frame{Records: records}
	return f.Size()
}

// sealCommand records s's seal with the request that made it, so that
// whoever writes the stream later can still tell a retry of that request
// from one of an earlier request.
func sealCommand(by domain.Proposer, s *stream) *domain.SealStreamBy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sealCommandLocked(by, s)
}

func sealCommandLocked(by domain.Proposer, s *stream) *domain.SealStreamBy {
	return &domain.SealStreamBy{By: by, Stream: s.id, Epoch: s.epoch, Closer: s.sealCloser}
}

// recordSeal makes a seal decided under the gate durable in the metadata.
// It is retried by closing again: the in-memory seal already refuses
// appends, and SealStream is idempotent. Once it is recorded, readers see
// the sealing append's records, held from them until then, with the
// closure. A refusal is success when a close that got the gate first
// recorded this seal (see sealUnrecorded); the close holds the gate until
// it has looked at its results.
func (e *Engine) recordSeal(ctx context.Context, s *stream) error {
	r, err := e.cfg.Plane.ProposeOne(ctx, sealCommand(e.cfg.By, s))
	if err != nil {
		return err
	}
	if !r.OK() {
		s.gate.Lock()
		closed := s.sealClosed
		s.gate.Unlock()
		if !closed {
			return fmt.Errorf("%w: seal stream %d: %s", ErrFenced, s.id, r)
		}
	}
	s.sealRecorded()
	return nil
}

// waitConfirmed waits until offsets below off are durable.
func (s *stream) waitConfirmed(ctx context.Context, off uint64) error {
	return s.waitDurable(ctx, off, false)
}
