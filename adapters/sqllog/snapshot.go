package sqllog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/picomq/pico/ports"
)

// putSnapshotSQL is an upsert whose update fires only for a higher index, so
// concurrent writers can never regress the snapshot. Both databases accept it.
const putSnapshotSQL = `INSERT INTO meta_snapshot (id, idx, payload) VALUES (0, ?, ?)
ON CONFLICT (id) DO UPDATE SET idx = EXCLUDED.idx, payload = EXCLUDED.payload
WHERE meta_snapshot.idx < EXCLUDED.idx`

// PutSnapshot implements ports.MetaLog.
func (l *Log) PutSnapshot(ctx context.Context, s ports.Snapshot) error {
	if s.Index > math.MaxInt64 {
		return wrap("put snapshot", fmt.Errorf("index %d out of range", s.Index))
	}
	payload := s.Payload
	if payload == nil {
		payload = []byte{} // the column is NOT NULL
	}
	_, err := l.db.DB.ExecContext(ctx, l.dialect.bind(putSnapshotSQL), int64(s.Index), payload)
	return wrap("put snapshot", err)
}

// Snapshot implements ports.MetaLog.
func (l *Log) Snapshot(ctx context.Context) (ports.Snapshot, error) {
	var idx int64
	var payload []byte
	err := l.db.DB.QueryRowContext(ctx, "SELECT idx, payload FROM meta_snapshot WHERE id = 0").Scan(&idx, &payload)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.Snapshot{}, wrap("snapshot", ports.ErrNoSnapshot)
	}
	if err != nil {
		return ports.Snapshot{}, wrap("snapshot", err)
	}
	return ports.Snapshot{Index: uint64(idx), Payload: payload}, nil
}
