package picoclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// batch is one request of a Producer: records appended together, sent with
// one stamp, resolved once.
type batch struct {
	records []Record
	bytes   int
	linger  *time.Timer
	index   int64 // order among the producer's batches, from 0
	done    chan struct{}
	err     error
	first   uint64 // the seq of the first record, when known
	known   bool
}

// Ack is the acknowledgement of one record appended to a Producer.
type Ack struct {
	b *batch
	i int
}

// Done is closed once the record is durable or has failed.
func (a *Ack) Done() <-chan struct{} { return a.b.done }

// Wait waits until the record is durable and returns nil, or returns why
// it failed, or ctx's error.
func (a *Ack) Wait(ctx context.Context) error {
	select {
	case <-a.b.done:
		return a.b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Seq is the record's seq once it is durable, if the server said it. It
// does not when an attempt whose answer was lost wrote the batch and a
// later batch landed before the retry: the record is in the stream once,
// at a seq the server no longer reports.
func (a *Ack) Seq() (uint64, bool) {
	select {
	case <-a.b.done:
		if a.b.err == nil && a.b.known {
			return a.b.first + uint64(a.i), true
		}
	default:
	}
	return 0, false
}

// sealIfOpen seals b when its linger ends, unless it was sealed already.
func (p *Producer) sealIfOpen(b *batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == b {
		p.seal()
	}
}

// seal closes the open batch to records and queues it. p.mu is held.
func (p *Producer) seal() {
	b := p.open
	if b == nil {
		return
	}
	p.open = nil
	b.linger.Stop()
	b.index = p.index
	p.index++
	p.queued = append(p.queued, b)
	p.dispatch()
}

// dispatch sends queued batches while slots are free; after a failure it
// fails them instead. p.mu is held.
func (p *Producer) dispatch() {
	for len(p.queued) > 0 && (p.err != nil || len(p.inFlight) < p.o.MaxInFlight) {
		b := p.queued[0]
		p.queued = p.queued[1:]
		if p.err != nil {
			p.resolve(b, p.err)
			continue
		}
		p.inFlight = append(p.inFlight, b)
		go p.send(b)
	}
}

// send sends b until it is written or refused.
func (p *Producer) send(b *batch) {
	var deadline time.Time
	if p.o.RetryFor > 0 {
		deadline = time.Now().Add(p.o.RetryFor)
	}
	wait := newBackoff(p.o.MaxBackoff)
	var sent ProducerStamp // the last stamp sent: a repeat of it may be a duplicate
	for {
		stamp, prev := p.stampFor(b)
		first := stamp != sent
		sent = stamp
		res, err := p.c.Append(p.ctx, p.name, b.records, AppendOptions{Producer: &stamp})
		var api *APIError
		errors.As(err, &api)
		switch {
		case err == nil && first && !res.Applied:
			p.fail(b, fmt.Errorf("%w: the server already holds seq %d of epoch %d", ErrEpochInUse, stamp.Seq, stamp.Epoch))
			return
		case err == nil:
			p.written(b, stamp, res)
			return
		case p.ctx.Err() != nil:
			p.finish(b, fmt.Errorf("producer closed while a batch was in flight: %w", p.ctx.Err()))
			return
		case errors.Is(err, ErrSequenceGap) && prev != nil:
			// An earlier batch has not landed yet: send again after it.
			<-prev.done
			if prev.err != nil {
				p.finish(b, prev.err)
				return
			}
		case errors.Is(err, ErrSequenceGap) && p.rebase(b, stamp, api.ExpectedSeq):
		case errors.Is(err, ErrFenced) && p.o.ClaimOnFence:
			p.claim(stamp.Epoch, api.Epoch)
			if !p.retry(&wait, deadline, err) {
				p.fail(b, err)
				return
			}
		case transient(err) && !p.failedBefore(b):
			if !p.retry(&wait, deadline, err) {
				p.fail(b, fmt.Errorf("%w: %w", ErrUnknownOutcome, err))
				return
			}
		default:
			p.fail(b, err)
			return
		}
	}
}

// retry waits before the next attempt, and reports false once deadline
// has passed or the producer is closing.
func (p *Producer) retry(wait *backoff, deadline time.Time, err error) bool {
	if !deadline.IsZero() && time.Now().After(deadline) {
		return false
	}
	return wait.wait(p.ctx, err) == nil
}

// rebase makes b the seq the server expects, when a claim numbered the new
// epoch from a batch that had in fact landed at the old one: b is then the
// lowest batch unresolved. It reports whether b should be sent again.
func (p *Producer) rebase(b *batch, stamp ProducerStamp, expected *uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case stamp.Epoch != p.epoch:
		return true // claimed meanwhile: the new stamp decides
	case expected == nil || p.claimed != p.epoch || len(p.inFlight) == 0 || p.inFlight[0] != b || int64(*expected) > b.index:
		return false
	}
	p.base = b.index - int64(*expected)
	return true
}

// stampFor is b's stamp now, and the batch in flight before it, if any.
func (p *Producer) stampFor(b *batch) (ProducerStamp, *batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var prev *batch
	if i := slices.Index(p.inFlight, b); i > 0 {
		prev = p.inFlight[i-1]
	}
	return ProducerStamp{ID: p.o.ID, Epoch: p.epoch, Seq: uint64(b.index - p.base)}, prev
}

// claim moves to an epoch above the one that fenced used, once for all
// the batches it fenced; the lowest unresolved batch becomes seq 0.
func (p *Producer) claim(used uint64, server *uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.epoch != used {
		return // another batch claimed already
	}
	p.epoch = used + 1
	if server != nil {
		p.epoch = max(p.epoch, *server+1)
	}
	p.claimed = p.epoch
	p.base = p.inFlight[0].index
}

// written resolves b from the server's acknowledgement.
func (p *Producer) written(b *batch, stamp ProducerStamp, res AppendResult) {
	n := uint64(len(b.records))
	switch {
	case res.Applied:
		b.first, b.known = res.Start, true
	case res.ProducerSeq == stamp.Seq && res.Next >= n:
		// A repeat of the producer's last batch: the server answers
		// with that batch's end.
		b.first, b.known = res.Next-n, true
	}
	p.finish(b, nil)
}

// failedBefore reports whether a batch before b failed the producer: b
// cannot land after it, so its retries are pointless.
func (p *Producer) failedBefore(b *batch) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err != nil && p.failedAt < b.index
}

// fail fails the producer with err, which refused b, and then b.
func (p *Producer) fail(b *batch, err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err, p.failedAt = fmt.Errorf("producer %s on %s: %w", p.o.ID, p.name, err), b.index
	}
	p.seal() // the open batch fails too
	p.mu.Unlock()
	p.finish(b, err)
}

// abandon fails every batch not yet resolved with err: Close gave up.
func (p *Producer) abandon(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err, p.failedAt = err, -1
	}
	p.seal()
	p.dispatch()
}

// finish resolves an in-flight batch and frees its slot.
func (p *Producer) finish(b *batch, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.inFlight, b); i >= 0 {
		p.inFlight = slices.Delete(p.inFlight, i, i+1)
	}
	p.resolve(b, err)
	p.dispatch()
}

// resolve ends b with err and gives back its budget. p.mu is held.
func (p *Producer) resolve(b *batch, err error) {
	b.err, b.records = err, nil
	close(b.done)
	p.budget.Release(int64(b.bytes))
}
