package sqllog

import (
	"context"
	"time"

	"github.com/picomq/pico/ports"
)

// heartbeats is the ports.Heartbeats stored in the meta_heartbeat table of
// the log's database, a row per node id.
type heartbeats struct {
	log *Log
}

// Heartbeats returns the heartbeats that belong to this log.
func (l *Log) Heartbeats() ports.Heartbeats { return heartbeats{log: l} }

// beatSQL is one statement, so the database orders racing beats; the WHERE
// keeps a newer epoch's record from an older process.
const beatSQL = `INSERT INTO meta_heartbeat (node, epoch, at_ms) VALUES (?, ?, ?)
ON CONFLICT (node) DO UPDATE SET epoch = excluded.epoch, at_ms = excluded.at_ms
WHERE meta_heartbeat.epoch <= excluded.epoch`

// Beat implements ports.Heartbeats.
func (h heartbeats) Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error {
	_, err := h.log.db.NewRaw(beatSQL, int64(node), int64(epoch), now.UnixMilli()).Exec(ctx)
	return wrap("beat", err)
}

// Beats implements ports.Heartbeats.
func (h heartbeats) Beats(ctx context.Context) ([]ports.Heartbeat, error) {
	var rows []heartbeatRow
	if err := h.log.db.NewSelect().Model(&rows).Order("node").Scan(ctx); err != nil {
		return nil, wrap("beats", err)
	}
	out := make([]ports.Heartbeat, len(rows))
	for i, r := range rows {
		out[i] = ports.Heartbeat{Node: uint32(r.Node), Epoch: uint64(r.Epoch), At: time.UnixMilli(r.AtMs)}
	}
	return out, nil
}
