package meta

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/picomq/pico/ports"
)

// LeaseKeeper holds the cluster's maintenance lease when it can: it acquires
// the lease when free, renews it every RenewEvery, and demotes itself as soon
// as it cannot confirm a renewal within TTL-RenewEvery of the last success,
// before any other node may take the lease over. Only its own successor, a
// newer process of the same node that has fenced it, takes the lease sooner;
// the renewal after that fails. Lease-gated work checks Held before every
// step; correctness never depends on it.
type LeaseKeeper struct {
	Lease  ports.Lease
	Holder string
	// Predecessor is the holder this one supersedes ("" none): the previous
	// process of the same node, fenced by this one's registration. Its
	// lease is taken at once; it cannot take it back (see ports.Lease).
	Predecessor string
	TTL         time.Duration // 10 s
	RenewEvery  time.Duration // 2.5 s
	Now         func() time.Time
	Logger      *slog.Logger

	mu     sync.Mutex
	epoch  uint64
	held   bool
	lastOK time.Time
	// acquireFailing: the last acquire failed other than by the lease
	// being held, so the next failure is logged at debug only.
	acquireFailing bool
}

func (k *LeaseKeeper) defaults() {
	if k.TTL <= 0 {
		k.TTL = 10 * time.Second
	}
	if k.RenewEvery <= 0 {
		k.RenewEvery = k.TTL / 4
	}
	if k.Now == nil {
		k.Now = time.Now
	}
	if k.Logger == nil {
		k.Logger = slog.Default()
	}
}

// Run keeps the lease until ctx ends, then releases it.
func (k *LeaseKeeper) Run(ctx context.Context) {
	k.defaults()
	tick := time.NewTicker(k.RenewEvery)
	defer tick.Stop()
	for {
		k.Tick(ctx)
		select {
		case <-ctx.Done():
			k.release()
			return
		case <-tick.C:
		}
	}
}

// Tick performs one acquire-or-renew step. Run calls it; tests drive it
// directly with a fake clock.
func (k *LeaseKeeper) Tick(ctx context.Context) {
	k.defaults()
	k.mu.Lock()
	held, epoch, lastOK := k.held, k.epoch, k.lastOK
	k.mu.Unlock()
	now := k.Now()
	if !held {
		e, err := k.Lease.Acquire(ctx, k.Holder, k.Predecessor, k.TTL, now)
		if err == nil {
			k.set(true, e, now)
			k.Logger.Info("maintenance lease acquired", "epoch", e)
		}
		k.noteAcquire(err)
		return
	}
	err := k.Lease.Renew(ctx, k.Holder, epoch, k.TTL, now)
	switch {
	case err == nil:
		k.set(true, epoch, now)
	case errors.Is(err, ports.ErrLeaseLost):
		k.set(false, 0, time.Time{})
		k.Logger.Warn("maintenance lease lost", "epoch", epoch)
	case now.Sub(lastOK) >= k.TTL-k.RenewEvery:
		// Unconfirmed for too long: another node may take over at lastOK+TTL.
		k.set(false, 0, time.Time{})
		k.Logger.Warn("maintenance lease renewal unconfirmed, stepping down", "epoch", epoch, "err", err)
	default:
		k.Logger.Warn("maintenance lease renewal failed, will retry", "err", err)
	}
}

// noteAcquire warns when acquiring starts failing (the database down),
// not on every tick while it is.
func (k *LeaseKeeper) noteAcquire(err error) {
	failed := err != nil && !errors.Is(err, ports.ErrLeaseHeld)
	switch {
	case failed && !k.acquireFailing:
		k.Logger.Warn("maintenance lease acquire failing, retried every renewal period", "err", err)
	case failed:
		k.Logger.Debug("maintenance lease acquire failed", "err", err)
	}
	k.acquireFailing = failed
}

// Held reports whether this node holds the lease, and at which epoch.
func (k *LeaseKeeper) Held() (epoch uint64, held bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.epoch, k.held
}

func (k *LeaseKeeper) set(held bool, epoch uint64, at time.Time) {
	k.mu.Lock()
	k.held, k.epoch, k.lastOK = held, epoch, at
	k.mu.Unlock()
}

func (k *LeaseKeeper) release() {
	epoch, held := k.Held()
	if !held {
		return
	}
	k.set(false, 0, time.Time{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := k.Lease.Release(ctx, k.Holder, epoch); err != nil {
		k.Logger.Warn("maintenance lease release failed", "err", err)
	}
}
