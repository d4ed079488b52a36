package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/picomq/pico/domain"
)

// AppendResult says where an append landed.
type AppendResult struct {
	First, Next uint64 // offsets [First, Next)
	TimestampMs int64  // of the last record
	// Duplicate: an idempotent producer's repeated sequence; nothing was
	// written and First/Next are those of the original append.
	Duplicate bool
	// ProducerSeq is the producer's last accepted sequence (with a stamp).
	ProducerSeq uint64
	// NotTheClose: a Duplicate on a sealed stream that repeats a request
	// other than the one that sealed it. The seal names its request in the
	// metadata (SealStreamBy); a seal recorded without one (SealStream, by
	// an older version) leaves every duplicate with it false.
	NotTheClose bool
}

// ProducerError is a refused producer stamp; Kind is ErrProducerGap or
// ErrProducerFenced. Epoch is the stream's current epoch for the producer.
type ProducerError struct {
	Kind               error
	Epoch              uint64
	Expected, Received uint64
	// NewEpoch: a known producer's higher epoch did not start at 0.
	NewEpoch bool
}

func (e *ProducerError) Error() string {
	if e.Kind == ErrProducerFenced {
		return fmt.Sprintf("%v: current epoch %d", e.Kind, e.Epoch)
	}
	return fmt.Sprintf("%v: expected %d, got %d", e.Kind, e.Expected, e.Received)
}

func (e *ProducerError) Unwrap() error { return e.Kind }

// AppendOptions qualify an append.
type AppendOptions struct {
	// Producer makes the append idempotent: its dedup state travels in the
	// same WAL frame, so it is durable exactly when the records are (a
	// failed upload leaves no dedup state behind, and a retry is written,
	// not skipped).
	Producer *domain.ProducerStamp
	// MatchNext makes the append conditional: it is refused with
	// ErrMatchFailed unless the stream's next offset is *MatchNext.
	MatchNext *uint64
	// Seal closes the stream for appends after these records (which may be
	// none). The seal is decided under the gate, so no later append gets in,
	// and is recorded in the metadata (SealStream) once the records are
	// durable; the append returns after that.
	Seal bool
	// WriterSeq, when set, must sort bytewise above the stream's last
	// accepted writer sequence (else a *WriterSeqError); it becomes durable
	// with the records, like producer state. Checked after the producer.
	WriterSeq string
}

// WriterSeqError refuses a writer sequence not above Last, the stream's
// last accepted one.
type WriterSeqError struct{ Last string }

func (e *WriterSeqError) Error() string {
	return fmt.Sprintf("%v: the last accepted is %q", ErrWriterSeq, e.Last)
}

func (e *WriterSeqError) Unwrap() error { return ErrWriterSeq }

// Append writes records with an optional producer stamp; see AppendWith.
func (e *Engine) Append(ctx context.Context, id uint64, records []domain.Record, p *domain.ProducerStamp) (AppendResult, error) {
	return e.AppendWith(ctx, id, records, AppendOptions{Producer: p})
}

// AppendWith writes records to a stream this process has open and returns
// once they are durable, or once the WAL has failed them: that wait does
// not end with ctx (see below). ctx bounds the other waits: for room
// before the records are submitted, for a seal's record after, and for
// the original of a duplicate (or the records before a bare seal), whose
// outcome is someone else's to learn. Offsets and timestamps are assigned
// under the stream's gate; the wait for durability happens outside it. On
// ErrMatchFailed and ErrSealed the result's Next is the stream's tail.
func (e *Engine) AppendWith(ctx context.Context, id uint64, records []domain.Record, opts AppendOptions) (AppendResult, error) {
	s, ok := e.local(id)
	if !ok {
		return AppendResult{}, ErrNotLocal
	}
	if err := e.reserve(ctx, records); err != nil {
		return AppendResult{}, err
	}
	res, done, err := e.submit(s, records, opts)
	if err != nil || res.Duplicate || len(records) == 0 {
		e.release(recordsSize(records)) // nothing was written
	}
	if err != nil {
		return res, err
	}
	if res.Duplicate || done == nil {
		// A repeat's original (or the records before a bare seal) may
		// still be in flight: answer once they are durable.
		err = s.waitConfirmed(ctx, res.Next)
	} else {
		// Not abandoned when ctx ends: the WAL always answers (the bulk is
		// stored, or the WAL fails once its retries run out), and the
		// append becomes durable or not whether or not anyone still waits.
		// Waiting on ctx as well cost a select and, for a request's
		// context, a channel made and closed on every append.
		err = <-done
	}
	if err == nil && opts.Seal && !res.Duplicate {
		err = e.recordSeal(ctx, s)
	}
	return res, err
}

func (e *Engine) submit(s *stream, records []domain.Record, opts AppendOptions) (AppendResult, <-chan error, error) {
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.err(); err != nil {
		return AppendResult{}, nil, err
	}
	p := opts.Producer
	if p != nil {
		if res, dup, err := s.checkProducer(p); dup || err != nil {
			res.NotTheClose = dup && s.sealed && s.closer.Known && !s.closer.RepeatedBy(p)
			return res, nil, err
		}
	}
	switch {
	case s.sealed && opts.Seal && len(records) == 0 && (opts.MatchNext == nil || *opts.MatchNext == s.next):
		return s.acceptBare(p), nil, nil // closing again: idempotent, if its condition holds
	case s.sealed:
		return AppendResult{First: s.next, Next: s.next}, nil, ErrSealed
	case opts.MatchNext != nil && *opts.MatchNext != s.next:
		return AppendResult{First: s.next, Next: s.next}, nil, ErrMatchFailed
	case !s.writerSeqAbove(opts.WriterSeq):
		return AppendResult{First: s.next, Next: s.next}, nil, &WriterSeqError{Last: s.writerSeq}
	}
	s.sealed = opts.Seal
	if opts.Seal {
		s.closer = domain.Closer{Known: true}
		if p != nil {
			stamp := *p
			s.closer.Producer = &stamp
		}
	}
	if len(records) == 0 {
		return s.acceptBare(p), nil, nil
	}
	now := e.cfg.Now().UnixMilli()
	ts := max(now, s.lastTs) // monotonic per stream, even if the clock steps back
	recs := make([]domain.Record, len(records))
	for i, r := range records {
		r.TimestampMs = ts
		recs[i] = r
	}
	f := &domain.Frame{Stream: s.id, Epoch: s.epoch, Offset: s.next, Producer: p, WriterSeq: opts.WriterSeq, Records: recs}
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
	if p != nil {
		res.ProducerSeq = p.Seq
	}
	s.next, s.lastTs = end, ts
	if p != nil {
		s.producers[p.ID] = producerState{epoch: p.Epoch, seq: p.Seq, first: res.First, next: end}
	}
	if opts.WriterSeq != "" {
		s.writerSeq = opts.WriterSeq
	}
	return res, done, nil
}

// acceptBare accepts a request without records (a close): its producer's
// request counts like any other, so that the answer names its sequence, a
// retry of it is a duplicate and a lower epoch is fenced. No frame carries
// that state, so it lives in memory only, which is enough: a closed stream
// takes no more records. The caller holds s's gate.
func (s *stream) acceptBare(p *domain.ProducerStamp) AppendResult {
	res := AppendResult{First: s.next, Next: s.next, TimestampMs: s.lastTs}
	if p != nil {
		res.ProducerSeq = p.Seq
		s.producers[p.ID] = producerState{epoch: p.Epoch, seq: p.Seq, first: s.next, next: s.next}
	}
	return res
}

// writerSeqAbove reports whether an append's writer sequence may follow the
// stream's last accepted one: none at all, or bytewise greater ("10" is
// below "9": writers pad them).
func (s *stream) writerSeqAbove(seq string) bool {
	return seq == "" || strings.Compare(seq, s.writerSeq) > 0
}

// checkProducer applies the idempotent-producer rules: a stale epoch is
// fenced, a repeated sequence is a duplicate, a skipped one is a gap.
// Sequences start at 0 for each new producer epoch.
func (s *stream) checkProducer(p *domain.ProducerStamp) (AppendResult, bool, error) {
	cur, known := s.producers[p.ID]
	switch {
	case !known || p.Epoch > cur.epoch:
		if p.Seq != 0 {
			return AppendResult{}, false, &ProducerError{Kind: ErrProducerGap, Epoch: p.Epoch, Expected: 0, Received: p.Seq, NewEpoch: known}
		}
	case p.Epoch < cur.epoch:
		return AppendResult{}, false, &ProducerError{Kind: ErrProducerFenced, Epoch: cur.epoch, Received: p.Seq}
	case p.Seq <= cur.seq:
		return AppendResult{First: cur.first, Next: cur.next, Duplicate: true, ProducerSeq: cur.seq}, true, nil
	case p.Seq > cur.seq+1:
		return AppendResult{}, false, &ProducerError{Kind: ErrProducerGap, Epoch: cur.epoch, Expected: cur.seq + 1, Received: p.Seq}
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
		confirmed, changed, failed := s.confirmed, s.changedLocked(), s.failed
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
	return &domain.SealStreamBy{By: by, Stream: s.id, Epoch: s.epoch, Closer: s.closer.Producer}
}

// recordSeal makes a seal decided under the gate durable in the metadata.
// It is retried by closing again: the in-memory seal already refuses
// appends, and SealStream is idempotent. A refusal is success when a close
// that got the gate first recorded this seal (see sealUnrecorded); the
// close holds the gate until it has looked at its results.
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
	s.wake()
	return nil
}
