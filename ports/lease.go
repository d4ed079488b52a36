package ports

import (
	"context"
	"time"
)

// Lease is a single cluster-wide lease (one per log) that picks the node doing
// maintenance (garbage collection, reservation expiry). Each successful
// Acquire returns a strictly larger epoch, the fencing token. Times come from
// the caller's clock; correctness of the data never depends on the lease, only
// the efficiency of maintenance does.
type Lease interface {
	// Acquire takes the lease for holder until now+ttl when it is free, expired,
	// already held by holder (a re-acquire also bumps the epoch) or held by
	// predecessor, unexpired or not: a process that has superseded another
	// (the same node restarted after a crash) takes its lease at once instead
	// of waiting out the dead holder's TTL. An empty predecessor names no one.
	// It returns the new epoch, or ErrLeaseHeld when any other holder's lease
	// is unexpired.
	Acquire(ctx context.Context, holder, predecessor string, ttl time.Duration, now time.Time) (epoch uint64, err error)

	// Renew extends the lease to now+ttl if holder still holds it at epoch and
	// it has not expired at now; otherwise ErrLeaseLost.
	Renew(ctx context.Context, holder string, epoch uint64, ttl time.Duration, now time.Time) error

	// Release ends the lease if holder holds it at epoch; otherwise a no-op.
	// Idempotent.
	Release(ctx context.Context, holder string, epoch uint64) error
}
