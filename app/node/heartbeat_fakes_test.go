package node

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/ports"
)

// Heartbeats that misbehave as databases and processes do, for the
// failover tests.

// faultyBeats are heartbeats with a fault a test switches on and off.
type faultyBeats interface {
	ports.Heartbeats
	fail(on bool)
}

func newDroppingBeats(h ports.Heartbeats) faultyBeats { return &droppingBeats{Heartbeats: h} }
func newFlakyBeats(h ports.Heartbeats) faultyBeats    { return &flakyBeats{Heartbeats: h} }
func newBlockingBeats(h ports.Heartbeats) faultyBeats { return &blockingBeats{Heartbeats: h} }

// droppingBeats drops a process's beats while down but says they worked:
// as if the process died while it keeps running, or as a database that
// fails over to a stale replica loses writes.
type droppingBeats struct {
	ports.Heartbeats
	down atomic.Bool
}

func (d *droppingBeats) fail(on bool) { d.down.Store(on) }

func (d *droppingBeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if d.down.Load() {
		return nil
	}
	return d.Heartbeats.Beat(ctx, node, epoch, now)
}

// flakyBeats fails every call while down, and can stall one reading after
// it was taken, as a slow database or a starved reader does.
type flakyBeats struct {
	ports.Heartbeats
	down  atomic.Bool
	stall atomic.Int64 // nanoseconds, for the next reading
}

var errDatabaseDown = errors.New("database unavailable")

func (f *flakyBeats) fail(on bool) { f.down.Store(on) }

func (f *flakyBeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if f.down.Load() {
		return errDatabaseDown
	}
	return f.Heartbeats.Beat(ctx, node, epoch, now)
}

func (f *flakyBeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if f.down.Load() {
		return nil, errDatabaseDown
	}
	b, err := f.Heartbeats.Beats(ctx)
	time.Sleep(time.Duration(f.stall.Swap(0)))
	return b, err
}

// blockingBeats holds every call while held, as a query queued behind a
// restarting database does, until released or its context ends.
type blockingBeats struct {
	ports.Heartbeats
	mu      sync.Mutex
	gate    chan struct{} // nil: open
	blocked atomic.Int64  // calls that waited at the gate
}

// fail closes the gate (on) or opens it, letting waiting calls through.
func (b *blockingBeats) fail(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case on && b.gate == nil:
		b.gate = make(chan struct{})
	case !on && b.gate != nil:
		close(b.gate)
		b.gate = nil
	}
}

func (b *blockingBeats) wait(ctx context.Context) error {
	b.mu.Lock()
	gate := b.gate
	b.mu.Unlock()
	if gate == nil {
		return nil
	}
	b.blocked.Add(1)
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blockingBeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	if err := b.wait(ctx); err != nil {
		return err
	}
	return b.Heartbeats.Beat(ctx, node, epoch, now)
}

func (b *blockingBeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b.Heartbeats.Beats(ctx)
}

// failingReads fails the last `failing` readings of every `every`.
type failingReads struct {
	ports.Heartbeats
	every, failing int64
	calls          atomic.Int64
}

func (f *failingReads) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	if f.calls.Add(1)%f.every >= f.every-f.failing {
		return nil, errDatabaseDown
	}
	return f.Heartbeats.Beats(ctx)
}

// hangingAppends holds every append to the metadata log while failing,
// until released or its context ends; reads go through.
type hangingAppends struct {
	ports.MetaLog
	gate blockingBeats // only its gate is used
}

func (h *hangingAppends) fail(on bool) { h.gate.fail(on) }

func (h *hangingAppends) Append(ctx context.Context, index uint64, payload []byte) error {
	if err := h.gate.wait(ctx); err != nil {
		return err
	}
	return h.MetaLog.Append(ctx, index, payload)
}
