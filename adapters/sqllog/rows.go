package sqllog

import (
	"context"
	"fmt"
	"math"

	"github.com/uptrace/bun"

	"github.com/picomq/pico/ports"
)

// Append implements ports.MetaLog.
func (l *Log) Append(ctx context.Context, index uint64, payload []byte) error {
	if index == 0 || index > math.MaxInt64 {
		return wrap("append", fmt.Errorf("index %d out of range", index))
	}
	if payload == nil {
		payload = []byte{} // the column is NOT NULL
	}
	res, err := l.db.DB.ExecContext(ctx, l.dialect.bind(l.dialect.appendSQL), int64(index), payload, int64(index))
	if isUniqueViolation(err) {
		return wrap("append", ports.ErrConflict)
	}
	if err != nil {
		return wrap("append", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap("append", err)
	}
	// No row: the index is at or below the truncation point, so it was
	// written once already.
	if n == 0 {
		return wrap("append", ports.ErrConflict)
	}
	if l.dialect.listenURL == "" {
		l.hub.Wake()
	}
	return nil
}

// Read implements ports.MetaLog.
func (l *Log) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	if limit <= 0 {
		return nil, wrap("read", fmt.Errorf("limit %d is not positive", limit))
	}
	if after > math.MaxInt64 {
		return nil, nil
	}
	var rows []logRow
	err := l.db.NewSelect().Model(&rows).
		Where("idx > ?", int64(after)).
		OrderExpr("idx ASC").
		Limit(int64(limit)).
		Scan(ctx)
	if err != nil {
		return nil, wrap("read", err)
	}
	// The point is read after the rows: a Truncate that removed some of them
	// committed before this read, so it is seen and reported.
	through, err := truncationPoint(ctx, l.db)
	if err != nil {
		return nil, wrap("read", err)
	}
	if int64(after) < through {
		return nil, wrap("read", ports.ErrTruncated)
	}
	out := make([]ports.Row, len(rows))
	for i, r := range rows {
		out[i] = ports.Row{Index: uint64(r.Idx), Payload: r.Payload}
	}
	return out, nil
}

// LastIndex implements ports.MetaLog. The truncation point counts too, so a
// log truncated past its snapshot still never reports a lower index.
func (l *Log) LastIndex(ctx context.Context) (uint64, error) {
	last, err := lastIndex(ctx, l.db)
	return uint64(last), wrap("last index", err)
}

const lastIndexSQL = `SELECT COALESCE((SELECT MAX(idx) FROM meta_log), 0),
COALESCE((SELECT idx FROM meta_snapshot WHERE id = 0), 0),
(SELECT through FROM meta_truncation WHERE id = 0)`

func lastIndex(ctx context.Context, db bun.IDB) (int64, error) {
	var row, snap, through int64
	if err := db.NewRaw(lastIndexSQL).Scan(ctx, &row, &snap, &through); err != nil {
		return 0, err
	}
	return max(row, snap, through), nil
}

func truncationPoint(ctx context.Context, db bun.IDB) (int64, error) {
	var through int64
	err := db.NewSelect().Model((*truncationRow)(nil)).Column("through").Where("id = 0").Scan(ctx, &through)
	return through, err
}

// Truncate implements ports.MetaLog. The point is recorded before rows go, in
// one transaction, so readers never see a hole without the point.
func (l *Log) Truncate(ctx context.Context, through uint64) error {
	err := l.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		last, err := lastIndex(ctx, tx)
		if err != nil {
			return err
		}
		point := min(int64(min(through, math.MaxInt64)), last)
		_, err = tx.NewUpdate().Model((*truncationRow)(nil)).
			Set("through = ?", point).
			Where("id = 0 AND through < ?", point).
			Exec(ctx)
		if err != nil {
			return err
		}
		_, err = tx.NewDelete().Model((*logRow)(nil)).Where("idx <= ?", point).Exec(ctx)
		return err
	})
	return wrap("truncate", err)
}
