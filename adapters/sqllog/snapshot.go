package sqllog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/picomq/pico/ports"
)

// PutSnapshot implements ports.MetaLog: an upsert whose update only fires for
// a higher index, so concurrent writers can never regress the snapshot.
func (l *Log) PutSnapshot(ctx context.Context, s ports.Snapshot) error {
	if s.Index > math.MaxInt64 {
		return wrap("put snapshot", fmt.Errorf("index %d out of range", s.Index))
	}
	row := &snapshotRow{Idx: int64(s.Index), Payload: s.Payload}
	if row.Payload == nil {
		row.Payload = []byte{} // the column is NOT NULL
	}
	_, err := l.db.NewInsert().Model(row).
		On("CONFLICT (id) DO UPDATE").
		Set("idx = EXCLUDED.idx, payload = EXCLUDED.payload").
		Where("?TableAlias.idx < EXCLUDED.idx").
		Exec(ctx)
	return wrap("put snapshot", err)
}

// Snapshot implements ports.MetaLog.
func (l *Log) Snapshot(ctx context.Context) (ports.Snapshot, error) {
	var row snapshotRow
	err := l.db.NewSelect().Model(&row).Where("id = 0").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.Snapshot{}, wrap("snapshot", ports.ErrNoSnapshot)
	}
	if err != nil {
		return ports.Snapshot{}, wrap("snapshot", err)
	}
	return ports.Snapshot{Index: uint64(row.Idx), Payload: row.Payload}, nil
}
