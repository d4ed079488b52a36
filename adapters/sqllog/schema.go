package sqllog

import (
	"context"

	"github.com/uptrace/bun"
)

// logRow is one row of the metadata log.
type logRow struct {
	bun.BaseModel `bun:"table:meta_log,alias:r"`
	Idx           int64  `bun:"idx,pk,type:bigint"`
	Payload       []byte `bun:"payload,notnull"`
}

// snapshotRow is the only row of meta_snapshot (id 0), absent until the first
// PutSnapshot.
type snapshotRow struct {
	bun.BaseModel `bun:"table:meta_snapshot,alias:s"`
	ID            int    `bun:"id,pk"`
	Idx           int64  `bun:"idx,notnull,type:bigint"`
	Payload       []byte `bun:"payload,notnull"`
}

// truncationRow is the only row of meta_truncation (id 0): rows with
// idx <= Through were removed. Read needs it to tell "truncated" from "tail".
type truncationRow struct {
	bun.BaseModel `bun:"table:meta_truncation,alias:t"`
	ID            int   `bun:"id,pk"`
	Through       int64 `bun:"through,notnull,type:bigint"`
}

// leaseRow is the only row of meta_lease (id 0). The lease is valid while
// now <= ExpiresAtMs.
type leaseRow struct {
	bun.BaseModel `bun:"table:meta_lease,alias:l"`
	ID            int    `bun:"id,pk"`
	Holder        string `bun:"holder,notnull"`
	Epoch         int64  `bun:"epoch,notnull,type:bigint"`
	ExpiresAtMs   int64  `bun:"expires_at_ms,notnull,type:bigint"`
}

// heartbeatRow is a node id's latest heartbeat (ports.Heartbeats).
type heartbeatRow struct {
	bun.BaseModel `bun:"table:meta_heartbeat,alias:h"`
	Node          int64 `bun:"node,pk,type:bigint"`
	Epoch         int64 `bun:"epoch,notnull,type:bigint"`
	AtMs          int64 `bun:"at_ms,notnull,type:bigint"`
}

// createSchema creates the tables and seeds the single-row ones. It is safe to
// run from several processes at once.
func createSchema(ctx context.Context, db *bun.DB, d dialect) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if d.schemaLock != "" {
			if _, err := tx.NewRaw(d.schemaLock, schemaLockKey).Exec(ctx); err != nil {
				return err
			}
		}
		models := []any{(*logRow)(nil), (*snapshotRow)(nil), (*truncationRow)(nil), (*leaseRow)(nil),
			(*heartbeatRow)(nil)}
		for _, m := range models {
			if _, err := tx.NewCreateTable().Model(m).IfNotExists().Exec(ctx); err != nil {
				return err
			}
		}
		seeds := []any{&truncationRow{}, &leaseRow{}}
		for _, m := range seeds {
			if _, err := tx.NewInsert().Model(m).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}
