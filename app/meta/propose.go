package meta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// proposal is one Propose call: its commands always share a row.
type proposal struct {
	cmds      []domain.Command
	done      chan struct{}
	results   []domain.Result
	err       error
	abandoned atomic.Bool // the caller gave up before its row was written
}

// rowWait is the bookkeeping for one row this node is appending; the tailer
// fills it when it applies the row at that index.
type rowWait struct {
	payload []byte
	results []domain.Result
	state   rowState
	// stored: the append succeeded, so the tailer may apply payload without
	// reading the row back (it is exactly what the log holds at this index).
	stored bool
}

type rowState uint8

const (
	rowWaiting rowState = iota
	rowApplied          // the row at this index was applied; results set if it is ours
	rowSkipped          // folded into an installed snapshot: outcome unknown
)

// applied records the results of the row at this index. The payload is kept
// to tell our row from another writer's after an ambiguous append error.
func (w *rowWait) applied(payload []byte, results []domain.Result) {
	w.state = rowApplied
	if bytes.Equal(payload, w.payload) {
		w.results = results
	}
}

func (w *rowWait) skipped() { w.state = rowSkipped }

// Propose appends cmds to the log as part of one row (group-committed with
// other proposals) and returns their results once the row is applied and the
// view that contains it is published: the caller always reads its own write.
// A context error or ErrOutcomeUnknown means the commands may still commit.
func (p *Plane) Propose(ctx context.Context, cmds ...domain.Command) ([]domain.Result, error) {
	if len(cmds) == 0 || len(cmds) > p.cfg.MaxBatch {
		return nil, fmt.Errorf("meta: propose 1..%d commands, not %d", p.cfg.MaxBatch, len(cmds))
	}
	if err := p.Health(); err != nil {
		return nil, err
	}
	pr := &proposal{cmds: cmds, done: make(chan struct{})}
	start := time.Now()
	select {
	case p.queue <- pr:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-pr.done:
		if pr.err == nil && p.cfg.ProposeSeconds != nil {
			p.cfg.ProposeSeconds.Observe(time.Since(start).Seconds())
		}
		return pr.results, pr.err
	case <-ctx.Done():
		pr.abandoned.Store(true)
		return nil, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// ProposeOne proposes a single command.
func (p *Plane) ProposeOne(ctx context.Context, cmd domain.Command) (domain.Result, error) {
	res, err := p.Propose(ctx, cmd)
	if err != nil {
		return domain.Result{}, err
	}
	return res[0], nil
}

// flush is the group-commit loop: one row in flight per process, filled with
// every proposal queued while the previous row was being written.
func (p *Plane) flush(ctx context.Context) {
	defer close(p.appended)
	next := p.Applied() + 1
	var carry *proposal // a proposal that did not fit the previous row
	defer func() {
		if carry != nil {
			carry.finish(nil, ErrClosed)
		}
	}()
	for {
		first := carry
		if first == nil {
			select {
			case first = <-p.queue:
			case <-ctx.Done():
				return
			}
		}
		var batch []*proposal
		batch, carry = p.gather(first)
		if len(batch) == 0 {
			continue
		}
		if idx, err := p.commitRow(ctx, batch, next); err == nil {
			next = idx + 1
		}
	}
}

// gather takes queued proposals without waiting, up to MaxBatch commands. A
// proposal that would overflow the row is returned to lead the next one.
func (p *Plane) gather(first *proposal) (batch []*proposal, carry *proposal) {
	n := 0
	for pr := first; ; {
		if pr.abandoned.Load() {
			pr.finish(nil, ErrOutcomeUnknown)
		} else {
			batch = append(batch, pr)
			n += len(pr.cmds)
		}
		if n >= p.cfg.MaxBatch {
			return batch, nil
		}
		select {
		case pr = <-p.queue:
			if n+len(pr.cmds) > p.cfg.MaxBatch {
				return batch, pr
			}
		default:
			return batch, nil
		}
	}
}

func (pr *proposal) finish(results []domain.Result, err error) {
	pr.results, pr.err = results, err
	close(pr.done)
}

// appendedRow is a row stored in the log whose results are not delivered yet.
type appendedRow struct {
	index uint64
	batch []*proposal
}

// commitRow appends the batch as one row at the first free index at or after
// next and hands it to the deliverer, so the next row can be written while
// this one is applied. It returns the row's index.
func (p *Plane) commitRow(ctx context.Context, batch []*proposal, next uint64) (uint64, error) {
	var cmds []domain.Command
	for _, pr := range batch {
		cmds = append(cmds, pr.cmds...)
	}
	payload := domain.EncodeRow(cmds)
	idx, err := p.appendRow(ctx, payload, next)
	if err != nil {
		for _, pr := range batch {
			pr.finish(nil, err)
		}
		return 0, err
	}
	p.appended <- appendedRow{index: idx, batch: batch} // bounded: backpressure on the flusher
	return idx, nil
}

// deliver waits, row by row in log order, until the tailer applied each
// appended row, then hands every proposal its own results.
func (p *Plane) deliver(ctx context.Context) {
	for row := range p.appended {
		results, err := p.awaitRow(ctx, row.index)
		p.mu.Lock()
		delete(p.pending, row.index)
		p.mu.Unlock()
		off := 0
		for _, pr := range row.batch {
			if err != nil {
				pr.finish(nil, err)
				continue
			}
			pr.finish(results[off:off+len(pr.cmds)], nil)
			off += len(pr.cmds)
		}
	}
}

// appendRow writes payload at the next free index. An append whose outcome
// is ambiguous (the connection failed mid-statement) is resolved by reading
// the row back, so a command is never written twice.
func (p *Plane) appendRow(ctx context.Context, payload []byte, next uint64) (uint64, error) {
	deadline := time.Now().Add(p.cfg.AppendTimeout)
	backoff := firstAppendBackoff
	idx := max(next, p.Applied()+1)
	// The wait is registered before the insert (the tailer may apply the
	// row at once) and kept while the append is retried at the same index:
	// the tailer may apply our row, stored by an attempt that reported a
	// failure, before a retry tells us so.
	w, err := p.awaitIndex(idx, payload)
	mayBeOurs := false // an attempt at idx failed after it may have stored the row
	for err == nil {
		err = p.log.Append(ctx, idx, payload)
		if err != nil && (mayBeOurs || !errors.Is(err, ports.ErrConflict)) {
			// Our success may have been lost with the connection, and a
			// conflict may be our own earlier attempt: only the stored
			// bytes can tell.
			mayBeOurs = true
			err = p.resolveAmbiguous(ctx, idx, payload, err)
		}
		if err == nil {
			p.mu.Lock()
			w.stored = true
			p.mu.Unlock()
			p.wake()
			return idx, nil
		}
		if errors.Is(err, ports.ErrConflict) {
			last, lerr := p.log.LastIndex(ctx)
			if lerr == nil {
				p.forget(idx)
				idx, mayBeOurs = max(last+1, idx+1), false
				p.wake()
				w, err = p.awaitIndex(idx, payload)
				continue
			}
			err = lerr
		}
		switch {
		case errors.Is(err, ErrOutcomeUnknown):
		case ctx.Err() != nil:
			err = ErrClosed
		case time.Now().After(deadline):
			err = fmt.Errorf("%w: %v", ErrUnavailable, err)
		default:
			p.logRetry(backoff == firstAppendBackoff, err, idx, backoff)
			time.Sleep(backoff)
			backoff = min(backoff*2, 500*time.Millisecond)
			err = p.Health()
		}
	}
	p.forget(idx)
	if mayBeOurs && !errors.Is(err, ErrOutcomeUnknown) {
		err = fmt.Errorf("%w: %w", ErrOutcomeUnknown, err) // the row may be stored, and be applied
	}
	return 0, err
}

// awaitIndex registers this node's wait for the row it appends at idx,
// unless the plane halted.
func (p *Plane) awaitIndex(idx uint64, payload []byte) (*rowWait, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.halted != nil {
		return nil, p.halted
	}
	w := &rowWait{payload: payload}
	p.pending[idx] = w
	return w, nil
}

// forget drops the wait for row idx.
func (p *Plane) forget(idx uint64) {
	p.mu.Lock()
	delete(p.pending, idx)
	p.mu.Unlock()
}

// resolveAmbiguous decides whether a failed append at idx stored our row: nil
// if it did, ErrConflict if another row is there. Payloads name their
// proposer, so equal bytes at idx can only be this process's own earlier
// attempt. If the row cannot be read it answers with another error, so the
// append is retried at idx (a conflict there may be our own earlier attempt,
// and moving on would write the row twice), or with ErrOutcomeUnknown once
// the row is truncated: folded into a snapshot, whatever it was.
func (p *Plane) resolveAmbiguous(ctx context.Context, idx uint64, payload []byte, cause error) error {
	rows, err := p.log.Read(ctx, idx-1, 1)
	switch {
	case errors.Is(err, ports.ErrTruncated):
		return fmt.Errorf("%w: append at %d: %v, and the row is truncated", ErrOutcomeUnknown, idx, cause)
	case err != nil:
		return fmt.Errorf("append at %d: %v; reading it back: %v", idx, cause, err)
	case len(rows) == 0 || rows[0].Index != idx:
		return fmt.Errorf("append at %d: %v, and no row there to read back", idx, cause)
	case bytes.Equal(rows[0].Payload, payload):
		return nil
	}
	return ports.ErrConflict
}

// awaitRow waits for the tailer to apply row idx and returns its results.
func (p *Plane) awaitRow(ctx context.Context, idx uint64) ([]domain.Result, error) {
	if err := p.WaitFor(ctx, idx); err != nil {
		if ctx.Err() != nil {
			return nil, ErrClosed
		}
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.pending[idx]
	if w == nil || w.state != rowApplied || w.results == nil {
		return nil, ErrOutcomeUnknown
	}
	return w.results, nil
}

// failQueued fails every proposal still queued.
func (p *Plane) failQueued(err error) {
	for {
		select {
		case pr := <-p.queue:
			pr.finish(nil, err)
		default:
			return
		}
	}
}

// firstAppendBackoff is the first retry delay of a row's append.
const firstAppendBackoff = 5 * time.Millisecond

// logRetry warns at a row's first failed append and logs its later
// retries at debug: while the database is down, one line per row given
// up on (AppendTimeout), not one per retry.
func (p *Plane) logRetry(first bool, err error, idx uint64, backoff time.Duration) {
	if first {
		p.logger.Warn("metadata append failing, retrying", "index", idx, "err", err)
		return
	}
	p.logger.Debug("metadata append failed, retrying", "index", idx, "err", err, "backoff", backoff)
}
