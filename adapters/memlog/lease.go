package memlog

import (
	"context"
	"sync"
	"time"

	"github.com/picomq/pico/ports"
)

// Lease is an in-memory ports.Lease. Safe for concurrent use.
type Lease struct {
	mu      sync.Mutex
	holder  string
	epoch   uint64
	expires int64 // Unix milliseconds; the lease is valid while now <= expires
}

var _ ports.Lease = (*Lease)(nil)

// NewLease returns a free lease at epoch 0.
func NewLease() *Lease { return &Lease{} }

// Acquire implements ports.Lease.
func (l *Lease) Acquire(ctx context.Context, holder, predecessor string, ttl time.Duration, now time.Time) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.expires >= now.UnixMilli() && l.holder != holder && (predecessor == "" || l.holder != predecessor) {
		return 0, ports.ErrLeaseHeld
	}
	l.holder = holder
	l.epoch++
	l.expires = now.Add(ttl).UnixMilli()
	return l.epoch, nil
}

// Renew implements ports.Lease.
func (l *Lease) Renew(ctx context.Context, holder string, epoch uint64, ttl time.Duration, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder != holder || l.epoch != epoch || l.expires < now.UnixMilli() {
		return ports.ErrLeaseLost
	}
	l.expires = now.Add(ttl).UnixMilli()
	return nil
}

// Release implements ports.Lease.
func (l *Lease) Release(ctx context.Context, holder string, epoch uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder == holder && l.epoch == epoch {
		l.expires = 0
	}
	return nil
}
