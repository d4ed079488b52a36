package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// ErrNodeIDInUse refuses to start a process whose node id a live process
// holds.
var ErrNodeIDInUse = errors.New("node id in use")

// checkIDFree refuses to register a second live process for one node id,
// and keeps a new process from superseding one that may still answer.
// Registering fences the node id's current process; if that one is alive
// elsewhere (two nodes configured with one id), it stops, its supervisor
// restarts it, and it fences this one in turn, for as long as both run.
//
// If the registered process has a heartbeat record at its epoch (one that
// left or was fenced has none: its epoch moved on), Start watches that
// record: if it changes, the process is alive and Start fails with
// ErrNodeIDInUse; if it stays still for the watch, this one takes over.
// The watch is minSilentBeats beats, the least silence failover takes for
// death too, and at least FailoverAfter: a process cut off from the
// database, or paused, answers from its own state for that long after its
// last confirmed beat (see Tenure), so a successor that took its streams
// sooner would let it report what they no longer are. That holds for a
// restart at the same address too, unless failover is off (then nothing
// bounds the tenure, and the restart registers at once). A reading that
// fails proves nothing either way: fencing keeps the data safe, so Start
// goes on.
func checkIDFree(ctx context.Context, cfg Config, v *domain.State) error {
	prev, ok := v.Node(cfg.ID)
	if !ok || cfg.Heartbeats == nil || (prev.Address == cfg.Address && cfg.FailoverAfter <= 0) {
		return nil
	}
	first, ok := beatAt(ctx, cfg.Heartbeats, cfg.ID, prev.Epoch, cfg.BeatEvery)
	if !ok {
		return nil
	}
	watch := max(minSilentBeats*cfg.BeatEvery, cfg.FailoverAfter)
	cfg.Logger.Info("the node id is registered to a process that may still run: watching its heartbeat before taking over",
		"node", cfg.ID, "epoch", prev.Epoch, "address", prev.Address, "for", watch)
	deadline := time.NewTimer(watch)
	defer deadline.Stop()
	poll := time.NewTicker(cfg.BeatEvery / 4)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-poll.C:
		}
		if at, ok := beatAt(ctx, cfg.Heartbeats, cfg.ID, prev.Epoch, cfg.BeatEvery); ok && !at.Equal(first) {
			return fmt.Errorf("%w: node %d is registered to a live process at %s (epoch %d, its heartbeat is moving); "+
				"starting would fence it, and it this one in turn: give this process a node id of its own, or stop that one first",
				ErrNodeIDInUse, cfg.ID, prev.Address, prev.Epoch)
		}
	}
}

// beatAt returns node's heartbeat record at epoch, if it has one and the
// records could be read within a beat.
func beatAt(ctx context.Context, hb ports.Heartbeats, node domain.NodeID, epoch uint64, beatEvery time.Duration) (time.Time, bool) {
	ctx, cancel := context.WithTimeout(ctx, beatEvery)
	defer cancel()
	beats, err := hb.Beats(ctx)
	if err != nil {
		return time.Time{}, false
	}
	for _, b := range beats {
		if b.Node == uint32(node) && b.Epoch == epoch {
			return b.At, true
		}
	}
	return time.Time{}, false
}
