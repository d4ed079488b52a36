package meta

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// readLimit bounds the rows fetched per read.
const readLimit = 1024

// tailer owns the mutable working state; only its goroutine touches it.
type tailer struct {
	p     *Plane
	state domain.State
	snap  *snapshotter
	// logBytes counts row bytes applied since the last snapshot.
	logBytes int
}

// run tails until ctx ends or the log halts. Wake-ups come from local
// appends, database notifications, and a poll timer as the fallback.
//
// The poll finds rows only when a notification was lost, or when another
// process writes a log that sends none (SQLite, which serves one node), so
// an idle tailer polls less and less often: each empty poll doubles the
// interval, up to maxPollFactor poll intervals, and any row or wake-up
// brings it back. Polling SQLite every 50 ms was half an idle node's CPU.
func (t *tailer) run(ctx context.Context) {
	notes := t.subscribe(ctx)
	poll := t.p.cfg.PollInterval
	timer := time.NewTimer(poll)
	defer timer.Stop()
	backoff := firstBackoff
	for ctx.Err() == nil {
		n, err := t.step(ctx)
		switch {
		case errors.Is(err, ErrHalted):
			return
		case err != nil && ctx.Err() == nil:
			t.logFailure(backoff == firstBackoff, err, backoff)
			n, backoff = 0, min(backoff*2, time.Second)
		case err == nil:
			if backoff != firstBackoff {
				t.p.logger.Info("metadata tail reads the log again")
			}
			backoff = firstBackoff
		}
		if n > 0 && err == nil {
			poll = t.p.cfg.PollInterval
			continue // more rows may be waiting
		}
		if err != nil {
			timer.Reset(backoff)
		} else {
			timer.Reset(poll)
		}
		select {
		case <-ctx.Done():
		case <-t.p.nudge:
			poll = t.p.cfg.PollInterval
		case <-notes:
			poll = t.p.cfg.PollInterval
		case <-timer.C:
			poll = min(2*poll, maxPollFactor*t.p.cfg.PollInterval)
		}
	}
}

// maxPollFactor bounds an idle tailer's poll interval, in poll intervals
// (1 s by default).
const maxPollFactor = 20

// firstBackoff is the tail's first retry delay; a longer one means the
// last read failed.
const firstBackoff = 10 * time.Millisecond

// logFailure warns when the tail starts failing and logs the retries
// after that at debug, so a database outage is one line, not one a retry.
func (t *tailer) logFailure(first bool, err error, backoff time.Duration) {
	if first {
		t.p.logger.Warn("metadata tail failing, retrying until it reads the log", "err", err)
		return
	}
	t.p.logger.Debug("metadata tail failed, retrying", "err", err, "backoff", backoff)
}

func (t *tailer) subscribe(ctx context.Context) <-chan struct{} {
	n, ok := t.p.log.(ports.LogNotifier)
	if !ok {
		return nil
	}
	ch, err := n.Notifications(ctx)
	if err != nil {
		t.p.logger.Warn("metadata notifications unavailable, polling only", "err", err)
		return nil
	}
	return ch
}

// step reads and applies one batch of rows; it returns how many it applied.
func (t *tailer) step(ctx context.Context) (int, error) {
	if err := t.p.Health(); errors.Is(err, ErrHalted) {
		return 0, err
	}
	if n, err := t.applyStored(); n > 0 || err != nil {
		t.maybeSnapshot(ctx)
		return n, err
	}
	rows, err := t.p.log.Read(ctx, t.state.Index, readLimit)
	if errors.Is(err, ports.ErrTruncated) {
		return 0, t.installSnapshot(ctx)
	}
	if err != nil {
		return 0, err
	}
	for i, row := range rows {
		if row.Index != t.state.Index+1 {
			// Rows vanished under us: another node truncated past our position.
			if i > 0 {
				t.p.publish(t.state)
			}
			return i, t.installSnapshot(ctx)
		}
		if err := t.applyRow(row); err != nil {
			t.p.publish(t.state)
			t.p.halt(err)
			return i, t.p.Health()
		}
	}
	if len(rows) > 0 {
		t.p.publish(t.state)
	}
	t.maybeSnapshot(ctx) // also when idle: a snapshot skipped while busy is retried
	return len(rows), nil
}

// applyStored applies, without a database read, the rows this node itself
// stored that come next in the log.
func (t *tailer) applyStored() (int, error) {
	n := 0
	for {
		t.p.mu.Lock()
		w := t.p.pending[t.state.Index+1]
		stored := w != nil && w.stored && w.state == rowWaiting
		t.p.mu.Unlock()
		if !stored {
			break
		}
		if err := t.applyRow(ports.Row{Index: t.state.Index + 1, Payload: w.payload}); err != nil {
			t.p.publish(t.state)
			t.p.halt(err)
			return n, t.p.Health()
		}
		n++
	}
	if n > 0 {
		t.p.publish(t.state)
	}
	return n, nil
}

// applyRow applies one row and hands its results to this node's waiter, if
// the row is one this node is appending.
func (t *tailer) applyRow(row ports.Row) error {
	cmds, err := domain.DecodeRow(row.Payload)
	if err != nil {
		return fmt.Errorf("row %d: %w", row.Index, err)
	}
	for _, c := range cmds {
		if needs := domain.CommandLevel(c.Code()); needs > t.p.cfg.Level {
			return fmt.Errorf("row %d: %w", row.Index, domain.Unreadable("command "+reflect.TypeOf(c).Elem().Name(), needs, t.p.cfg.Level))
		}
	}
	results := t.state.ApplyRow(row.Index, cmds)
	t.logBytes += len(row.Payload)
	if hook := t.p.appliedHook.Load(); hook != nil {
		for i, c := range cmds {
			(*hook)(row.Index, c, results[i])
		}
	}
	t.p.mu.Lock()
	if w := t.p.pending[row.Index]; w != nil {
		w.applied(row.Payload, results)
	}
	t.p.mu.Unlock()
	return nil
}

// installSnapshot replaces the working state with the stored snapshot when
// it is ahead of us. Waiters for rows folded into it learn only that their
// outcome is unknown.
func (t *tailer) installSnapshot(ctx context.Context) error {
	snap, err := t.p.log.Snapshot(ctx)
	if err != nil {
		return err
	}
	if snap.Index <= t.state.Index {
		return fmt.Errorf("meta: log truncated past %d but the snapshot is only at %d", t.state.Index, snap.Index)
	}
	if needs := domain.SnapshotLevel(snap.Payload); needs > t.p.cfg.Level {
		err := domain.Unreadable(fmt.Sprintf("the snapshot at row %d", snap.Index), needs, t.p.cfg.Level)
		t.p.halt(err)
		return t.p.Health()
	}
	st, err := domain.DecodeState(snap.Payload)
	if err != nil {
		t.p.halt(fmt.Errorf("snapshot at %d: %w", snap.Index, err))
		return t.p.Health()
	}
	if st.Index != snap.Index {
		t.p.halt(fmt.Errorf("snapshot stored at %d holds state of row %d", snap.Index, st.Index))
		return t.p.Health()
	}
	t.state = st
	t.logBytes = 0
	t.snap.mu.Lock()
	t.snap.last = max(t.snap.last, snap.Index)
	t.snap.lastBytes = len(snap.Payload)
	t.snap.mu.Unlock()
	t.p.mu.Lock()
	for idx, w := range t.p.pending {
		if idx <= snap.Index {
			w.skipped()
		}
	}
	t.p.mu.Unlock()
	t.p.publish(t.state)
	t.p.logger.Info("installed metadata snapshot", "index", snap.Index, "streams", st.StreamCount())
	return nil
}
