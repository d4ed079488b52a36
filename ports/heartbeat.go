package ports

import (
	"context"
	"time"
)

// Heartbeat is the latest sign of life of a node id's newest process.
type Heartbeat struct {
	Node  uint32
	Epoch uint64    // the process that beat
	At    time.Time // its clock when it beat (millisecond precision)
}

// Heartbeats records that node processes are alive, one record per node id,
// beside the metadata log (not in it: beats would fill the log of an idle
// cluster). Whoever judges liveness should watch records change on its own
// clock rather than compare At with it, so clock skew between nodes does not
// matter. Safe for concurrent use, including by several processes sharing
// one database.
type Heartbeats interface {
	// Beat records that process (node, epoch) is alive at now. A beat of an
	// epoch older than the recorded one is ignored, so a superseded process
	// still running cannot hide its successor's death; an equal or newer
	// epoch replaces the record. Idempotent.
	Beat(ctx context.Context, node uint32, epoch uint64, now time.Time) error

	// Beats returns every node's record, in node order.
	Beats(ctx context.Context) ([]Heartbeat, error)
}
