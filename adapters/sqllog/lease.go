package sqllog

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/picomq/pico/ports"
)

// lease is the ports.Lease stored in the meta_lease row of the log's
// database. Each method is one conditional statement, so the database
// arbitrates between nodes.
type lease struct {
	log *Log
}

// Lease returns the lease that belongs to this log.
func (l *Log) Lease() ports.Lease { return lease{log: l} }

const acquireSQL = `UPDATE meta_lease SET holder = ?, epoch = epoch + 1, expires_at_ms = ?
WHERE id = 0 AND (expires_at_ms < ? OR holder = ? OR holder = ?) RETURNING epoch`

// Acquire implements ports.Lease.
func (s lease) Acquire(ctx context.Context, holder, predecessor string, ttl time.Duration, now time.Time) (uint64, error) {
	if predecessor == "" {
		predecessor = holder // names no one else, not the free row's empty holder
	}
	var epoch int64
	err := s.log.db.NewRaw(acquireSQL, holder, now.Add(ttl).UnixMilli(), now.UnixMilli(), holder, predecessor).Scan(ctx, &epoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, wrap("acquire", ports.ErrLeaseHeld)
	}
	if err != nil {
		return 0, wrap("acquire", err)
	}
	return uint64(epoch), nil
}

const renewSQL = `UPDATE meta_lease SET expires_at_ms = ?
WHERE id = 0 AND holder = ? AND epoch = ? AND expires_at_ms >= ?`

// Renew implements ports.Lease.
func (s lease) Renew(ctx context.Context, holder string, epoch uint64, ttl time.Duration, now time.Time) error {
	res, err := s.log.db.NewRaw(renewSQL, now.Add(ttl).UnixMilli(), holder, int64(epoch), now.UnixMilli()).Exec(ctx)
	if err != nil {
		return wrap("renew", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap("renew", err)
	}
	if n == 0 {
		return wrap("renew", ports.ErrLeaseLost)
	}
	return nil
}

const releaseSQL = `UPDATE meta_lease SET expires_at_ms = 0 WHERE id = 0 AND holder = ? AND epoch = ?`

// Release implements ports.Lease.
func (s lease) Release(ctx context.Context, holder string, epoch uint64) error {
	_, err := s.log.db.NewRaw(releaseSQL, holder, int64(epoch)).Exec(ctx)
	return wrap("release", err)
}
