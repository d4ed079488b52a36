// Package faultlog wraps a metadata log, with the lease and heartbeats kept
// beside it, in seeded, injected faults: failed calls, appends that land
// although the caller is told they failed, delays, and a cut that fails
// every call, as when a node loses its database.
package faultlog

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/faultstore"
)

// ErrCut is the error of every call made while the log is cut off.
var ErrCut = errors.New("faultlog: cut off from the database")

// Config sets the faults of appends and reads (Read and LastIndex).
type Config struct {
	Seed         uint64
	Append, Read faultstore.Faults
}

// Counts are the faults injected so far.
type Counts struct {
	Calls, Failed, Ambiguous, Delayed, Cut int64
}

// Log is a ports.MetaLog (and ports.LogNotifier, when the inner log is one)
// that injects faults into calls to another. Close does not close the
// inner log, which other processes share.
type Log struct {
	inner   ports.MetaLog
	cfg     Config
	dice    *faultstore.Dice
	enabled atomic.Bool
	cut     atomic.Bool

	calls, failed, ambiguous, delayed, cuts atomic.Int64
}

var (
	_ ports.MetaLog     = (*Log)(nil)
	_ ports.LogNotifier = (*Log)(nil)
)

// New wraps inner with the faults of cfg, enabled.
func New(inner ports.MetaLog, cfg Config) *Log {
	l := &Log{inner: inner, cfg: cfg, dice: faultstore.NewDice(cfg.Seed)}
	l.enabled.Store(true)
	return l
}

// SetEnabled turns the drawn faults on or off.
func (l *Log) SetEnabled(on bool) { l.enabled.Store(on) }

// SetCut cuts the log off (every call fails with ErrCut) or restores it.
func (l *Log) SetCut(cut bool) { l.cut.Store(cut) }

// Cut reports whether the log is cut off.
func (l *Log) Cut() bool { return l.cut.Load() }

// Counts returns the faults injected so far.
func (l *Log) Counts() Counts {
	return Counts{Calls: l.calls.Load(), Failed: l.failed.Load(), Ambiguous: l.ambiguous.Load(),
		Delayed: l.delayed.Load(), Cut: l.cuts.Load()}
}

// reachable fails while the log is cut off.
func (l *Log) reachable(what string) error {
	if l.cut.Load() {
		l.cuts.Add(1)
		return fmt.Errorf("%w: %s", ErrCut, what)
	}
	return nil
}

func (l *Log) draw(f faultstore.Faults) faultstore.Plan {
	if !l.enabled.Load() {
		return faultstore.Plan{}
	}
	p := l.dice.Roll(f)
	l.calls.Add(1)
	for _, c := range []struct {
		on bool
		n  *atomic.Int64
	}{{p.Delay > 0, &l.delayed}, {p.Fail, &l.failed}, {p.Ambiguous, &l.ambiguous}} {
		if c.on {
			c.n.Add(1)
		}
	}
	return p
}

// Append implements ports.MetaLog.
func (l *Log) Append(ctx context.Context, index uint64, payload []byte) error {
	what := fmt.Sprintf("append at %d", index)
	if err := l.reachable(what); err != nil {
		return err
	}
	p := l.draw(l.cfg.Append)
	if err := p.Before(ctx, what); err != nil {
		return err
	}
	return p.After(what, l.inner.Append(ctx, index, payload))
}

// Read implements ports.MetaLog.
func (l *Log) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	what := fmt.Sprintf("read after %d", after)
	if err := l.reachable(what); err != nil {
		return nil, err
	}
	p := l.draw(l.cfg.Read)
	if err := p.Before(ctx, what); err != nil {
		return nil, err
	}
	rows, err := l.inner.Read(ctx, after, limit)
	if err = p.After(what, err); err != nil {
		return nil, err
	}
	return rows, nil
}

// LastIndex implements ports.MetaLog.
func (l *Log) LastIndex(ctx context.Context) (uint64, error) {
	if err := l.reachable("last index"); err != nil {
		return 0, err
	}
	p := l.draw(l.cfg.Read)
	if err := p.Before(ctx, "last index"); err != nil {
		return 0, err
	}
	last, err := l.inner.LastIndex(ctx)
	if err = p.After("last index", err); err != nil {
		return 0, err
	}
	return last, nil
}

// PutSnapshot implements ports.MetaLog.
func (l *Log) PutSnapshot(ctx context.Context, s ports.Snapshot) error {
	if err := l.reachable("put snapshot"); err != nil {
		return err
	}
	return l.inner.PutSnapshot(ctx, s)
}

// Snapshot implements ports.MetaLog.
func (l *Log) Snapshot(ctx context.Context) (ports.Snapshot, error) {
	if err := l.reachable("snapshot"); err != nil {
		return ports.Snapshot{}, err
	}
	return l.inner.Snapshot(ctx)
}

// Truncate implements ports.MetaLog.
func (l *Log) Truncate(ctx context.Context, through uint64) error {
	if err := l.reachable("truncate"); err != nil {
		return err
	}
	return l.inner.Truncate(ctx, through)
}

// Close implements ports.MetaLog; the inner log stays open.
func (l *Log) Close() error { return nil }

// Notifications implements ports.LogNotifier with the inner log's, if it
// has them; otherwise it fails and readers poll.
func (l *Log) Notifications(ctx context.Context) (<-chan struct{}, error) {
	if n, ok := l.inner.(ports.LogNotifier); ok {
		return n.Notifications(ctx)
	}
	return nil, errors.New("faultlog: the inner log sends no notifications")
}

// Lease is a ports.Lease that fails while log is cut off.
type Lease struct {
	Inner ports.Lease
	Log   *Log
}

// Acquire implements ports.Lease.
func (l Lease) Acquire(ctx context.Context, holder, predecessor string, ttl time.Duration, now time.Time) (uint64, error) {
	if err := l.Log.reachable("lease acquire"); err != nil {
		return 0, err
	}
	return l.Inner.Acquire(ctx, holder, predecessor, ttl, now)
}

// Renew implements ports.Lease.
func (l Lease) Renew(ctx context.Context, holder string, epoch uint64, ttl time.Duration, now time.Time) error {
	if err := l.Log.reachable("lease renew"); err != nil {
		return err
	}
	return l.Inner.Renew(ctx, holder, epoch, ttl, now)
}

// Release implements ports.Lease.
func (l Lease) Release(ctx context.Context, holder string, epoch uint64) error {
	if err := l.Log.reachable("lease release"); err != nil {
		return err
	}
	return l.Inner.Release(ctx, holder, epoch)
}

// Heartbeats is a ports.Heartbeats that fails while log is cut off.
type Heartbeats struct {
	Inner ports.Heartbeats
	Log   *Log
}

// Beat implements ports.Heartbeats.
func (h Heartbeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if err := h.Log.reachable("beat"); err != nil {
		return err
	}
	return h.Inner.Beat(ctx, node, epoch, now)
}

// Beats implements ports.Heartbeats.
func (h Heartbeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if err := h.Log.reachable("beats"); err != nil {
		return nil, err
	}
	return h.Inner.Beats(ctx)
}
