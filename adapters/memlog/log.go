// Package memlog is an in-memory ports.MetaLog, ports.LogNotifier,
// ports.Lease and ports.Heartbeats. It is a real implementation for
// single-process use and tests: it keeps the same ordering, conflict and
// truncation rules as the SQL log.
package memlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/picomq/pico/adapters/internal/storage/wakeups"
	"github.com/picomq/pico/ports"
)

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("memlog: closed")

// Log is an in-memory metadata log. Safe for concurrent use.
type Log struct {
	mu        sync.Mutex
	rows      []ports.Row // sorted by Index
	snapshot  *ports.Snapshot
	truncated uint64 // rows <= truncated were removed
	closed    bool
	hub       *wakeups.Hub
	lease     *Lease
	beats     *Heartbeats
}

var (
	_ ports.MetaLog     = (*Log)(nil)
	_ ports.LogNotifier = (*Log)(nil)
)

// New returns an empty log.
func New() *Log {
	return &Log{hub: wakeups.New(), lease: NewLease(), beats: NewHeartbeats()}
}

// enter checks ctx and takes the lock of an open log; on nil the caller
// must unlock.
func (l *Log) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// Lease returns the lease that belongs to this log.
func (l *Log) Lease() *Lease { return l.lease }

// Heartbeats returns the heartbeats that belong to this log.
func (l *Log) Heartbeats() *Heartbeats { return l.beats }

// position returns where a row with index sits, or would be inserted.
func (l *Log) position(index uint64) int {
	return sort.Search(len(l.rows), func(i int) bool { return l.rows[i].Index >= index })
}

// Append implements ports.MetaLog.
func (l *Log) Append(ctx context.Context, index uint64, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.append(index, payload); err != nil {
		return err
	}
	l.hub.Wake()
	return nil
}

func (l *Log) append(index uint64, payload []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	// A truncated index was written once, so it stays taken.
	if index <= l.truncated {
		return ports.ErrConflict
	}
	i := l.position(index)
	if i < len(l.rows) && l.rows[i].Index == index {
		return ports.ErrConflict
	}
	row := ports.Row{Index: index, Payload: clone(payload)}
	l.rows = slices.Insert(l.rows, i, row)
	return nil
}

// Read implements ports.MetaLog.
func (l *Log) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("memlog: read: limit %d is not positive", limit)
	}
	if err := l.enter(ctx); err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if after < l.truncated {
		return nil, ports.ErrTruncated
	}
	start := l.position(after + 1)
	end := min(start+limit, len(l.rows))
	out := make([]ports.Row, 0, end-start)
	for _, r := range l.rows[start:end] {
		out = append(out, ports.Row{Index: r.Index, Payload: clone(r.Payload)})
	}
	return out, nil
}

// LastIndex implements ports.MetaLog. The truncation point counts too, so a
// log truncated past its snapshot still never reports a lower index.
func (l *Log) LastIndex(ctx context.Context) (uint64, error) {
	if err := l.enter(ctx); err != nil {
		return 0, err
	}
	defer l.mu.Unlock()
	return l.lastIndex(), nil
}

func (l *Log) lastIndex() uint64 {
	last := l.truncated
	if n := len(l.rows); n > 0 {
		last = max(last, l.rows[n-1].Index)
	}
	if l.snapshot != nil {
		last = max(last, l.snapshot.Index)
	}
	return last
}

// PutSnapshot implements ports.MetaLog.
func (l *Log) PutSnapshot(ctx context.Context, s ports.Snapshot) error {
	if err := l.enter(ctx); err != nil {
		return err
	}
	defer l.mu.Unlock()
	if l.snapshot != nil && l.snapshot.Index >= s.Index {
		return nil
	}
	l.snapshot = &ports.Snapshot{Index: s.Index, Payload: clone(s.Payload)}
	return nil
}

// Snapshot implements ports.MetaLog.
func (l *Log) Snapshot(ctx context.Context) (ports.Snapshot, error) {
	if err := l.enter(ctx); err != nil {
		return ports.Snapshot{}, err
	}
	defer l.mu.Unlock()
	if l.snapshot == nil {
		return ports.Snapshot{}, ports.ErrNoSnapshot
	}
	return ports.Snapshot{Index: l.snapshot.Index, Payload: clone(l.snapshot.Payload)}, nil
}

// Truncate implements ports.MetaLog.
func (l *Log) Truncate(ctx context.Context, through uint64) error {
	if err := l.enter(ctx); err != nil {
		return err
	}
	defer l.mu.Unlock()
	point := min(through, l.lastIndex())
	if point <= l.truncated {
		return nil
	}
	l.truncated = point
	// Copy the tail so the removed payloads can be collected.
	l.rows = slices.Clone(l.rows[l.position(point+1):])
	return nil
}

// Notifications implements ports.LogNotifier.
func (l *Log) Notifications(ctx context.Context) (<-chan struct{}, error) {
	ch, err := l.hub.Subscribe(ctx)
	if err != nil {
		return nil, ErrClosed
	}
	return ch, nil
}

// Close implements ports.MetaLog. Idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.hub.Close()
	return nil
}

// clone copies b so callers never share memory with the log; nil stays empty.
func clone(b []byte) []byte {
	return append([]byte{}, b...)
}
