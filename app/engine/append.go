package engine

import (
	"context"
	"fmt"

	"github.com/picomq/pico/domain"
)

// AppendResult says where an append landed.
type AppendResult struct {
	First, Next uint64 // offsets [First, Next)
	TimestampMs int64  // of the last record
	// Duplicate: an idempotent producer's repeated sequence; nothing was
	// written and First/Next are those of the original append.
	Duplicate bool
}

// Append writes records to a stream this process has open and returns once
// they are durable. Offsets and timestamps are assigned under the stream's
// gate; the wait for durability happens outside it. A producer stamp makes
// the append idempotent: its dedup state travels in the same WAL frame, so
// it is durable exactly when the records are (a failed upload leaves no
// dedup state behind, and a retry is written, not skipped).
func (e *Engine) Append(ctx context.Context, id uint64, records []domain.Record, p *domain.ProducerStamp) (AppendResult, error) {
	s, ok := e.local(id)
	if !ok {
		return AppendResult{}, ErrNotLocal
	}
	if err := e.reserve(ctx, records); err != nil {
		return AppendResult{}, err
	}
	res, done, err := e.submit(s, records, p)
	if err != nil || res.Duplicate {
		e.release(recordsSize(records)) // nothing was written
	}
	if err != nil {
		return res, err
	}
	if res.Duplicate {
		// The original may still be in flight: acknowledge the repeat only
		// once the original is durable.
		return res, s.waitConfirmed(ctx, res.Next)
	}
	select {
	case err := <-done:
		return res, err
	case <-ctx.Done():
		return res, fmt.Errorf("engine: append outcome unknown: %w", ctx.Err())
	}
}

func (e *Engine) submit(s *stream, records []domain.Record, p *domain.ProducerStamp) (AppendResult, <-chan error, error) {
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.err(); err != nil {
		return AppendResult{}, nil, err
	}
	if p != nil {
		if res, dup, err := s.checkProducer(p); dup || err != nil {
			return res, nil, err
		}
	}
	now := e.cfg.Now().UnixMilli()
	ts := max(now, s.lastTs) // monotonic per stream, even if the clock steps back
	recs := make([]domain.Record, len(records))
	for i, r := range records {
		r.TimestampMs = ts
		recs[i] = r
	}
	f := &domain.Frame{Stream: s.id, Epoch: s.epoch, Offset: s.next, Producer: p, Records: recs}
	end := f.End()
	done := make(chan error, 1)
	s.mu.Lock()
	s.records = append(s.records, recs...) // invisible until confirmed passes them
	s.mu.Unlock()
	if err := e.cfg.WAL.Submit(f, func(err error) { s.durable(f, err); done <- err }); err != nil {
		s.durable(f, err)
		return AppendResult{}, nil, err
	}
	res := AppendResult{First: f.Offset, Next: end, TimestampMs: ts}
	s.next, s.lastTs = end, ts
	if p != nil {
		s.producers[p.ID] = producerState{epoch: p.Epoch, seq: p.Seq, first: res.First, next: end}
	}
	return res, done, nil
}

// checkProducer applies the idempotent-producer rules: a stale epoch is
// fenced, a repeated sequence is a duplicate, a skipped one is a gap.
// Sequences start at 0 for each new producer epoch.
func (s *stream) checkProducer(p *domain.ProducerStamp) (AppendResult, bool, error) {
	cur, known := s.producers[p.ID]
	switch {
	case !known || p.Epoch > cur.epoch:
		if p.Seq != 0 {
			return AppendResult{}, false, fmt.Errorf("%w: expected 0, got %d", ErrProducerGap, p.Seq)
		}
	case p.Epoch < cur.epoch:
		return AppendResult{}, false, fmt.Errorf("%w: current epoch %d", ErrProducerFenced, cur.epoch)
	case p.Seq <= cur.seq:
		return AppendResult{First: cur.first, Next: cur.next, Duplicate: true}, true, nil
	case p.Seq > cur.seq+1:
		return AppendResult{}, false, fmt.Errorf("%w: expected %d, got %d", ErrProducerGap, cur.seq+1, p.Seq)
	}
	return AppendResult{}, false, nil
}

func (s *stream) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// waitConfirmed waits until offsets below off are durable.
func (s *stream) waitConfirmed(ctx context.Context, off uint64) error {
	for {
		s.mu.Lock()
		confirmed, changed, failed := s.confirmed, s.changed, s.failed
		s.mu.Unlock()
		switch {
		case confirmed >= off:
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

// reserve waits until the records fit under MaxUncommittedBytes, then
// counts them: memory stays bounded when uploads fall behind appends.
func (e *Engine) reserve(ctx context.Context, records []domain.Record) error {
	n := recordsSize(records)
	for {
		e.roomMu.Lock()
		if e.uncommitted == 0 || e.uncommitted+n <= e.cfg.MaxUncommittedBytes {
			e.uncommitted += n
			over := e.uncommitted >= e.cfg.UploadThresholdBytes
			e.roomMu.Unlock()
			if over {
				e.requestUpload()
			}
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
