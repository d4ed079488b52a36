package node

import (
	"context"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Failover without an operator. Every process records a heartbeat every
// BeatEvery (ports.Heartbeats, beside the log). Every process also watches
// the records, and the lease holder fences (FenceNode) a registered node
// whose record at its registered epoch has not changed for FailoverAfter on
// the watcher's own clock, so clock skew between nodes does not matter. Its
// streams then count as closed, and the next request for one, on any node,
// opens it there: the open fences the old process's WAL in the object store
// and recovers every append it acknowledged (engine recovery).
//
// A wrong verdict (a node alive but cut off from the database, or paused)
// costs availability, never data: the fenced process can no longer commit,
// its WAL is fenced by the first takeover, and it sees the fence in its view
// and stops (Fenced), to be restarted at a fresh epoch. A node that never
// beat at its registered epoch (just registered, or already fenced) is not
// judged.

// seenBeat is a heartbeat record as a watcher saw it, and since when.
type seenBeat struct {
	beat  ports.Heartbeat
	since time.Time
}

// beatWatch is what one process has seen of the heartbeat records.
type beatWatch map[uint32]seenBeat

// observe folds the records read at now into w and returns the new watch:
// a record that changed restarts its silence.
func (w beatWatch) observe(beats []ports.Heartbeat, now time.Time) beatWatch {
	next := make(beatWatch, len(beats))
	for _, b := range beats {
		seen, ok := w[b.Node]
		if !ok || seen.beat.Epoch != b.Epoch || !seen.beat.At.Equal(b.At) {
			seen = seenBeat{beat: b, since: now}
		}
		next[b.Node] = seen
	}
	return next
}

// silent returns the processes registered in v, other than self, whose
// record at their registered epoch has not changed for after.
func (w beatWatch) silent(v *domain.State, self domain.NodeID, now time.Time, after time.Duration) []domain.Node {
	var out []domain.Node
	v.Nodes(func(n *domain.Node) bool {
		seen, ok := w[uint32(n.ID)]
		if n.ID != self && ok && seen.beat.Epoch == n.Epoch && now.Sub(seen.since) >= after {
			out = append(out, *n)
		}
		return true
	})
	return out
}

// runHeartbeats beats for this process, watches the others' beats and, on
// the lease holder, fences the silent ones, until ctx ends or this process
// is fenced.
func (n *Node) runHeartbeats(ctx context.Context) {
	t := time.NewTicker(n.cfg.BeatEvery)
	defer t.Stop()
	var watch beatWatch
	failing := false
	for {
		if n.checkFenced() {
			return
		}
		if n.cfg.Heartbeats != nil {
			failing = n.beat(ctx, failing)
			if n.cfg.FailoverAfter > 0 {
				watch = n.fenceSilent(ctx, watch)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat records this process's heartbeat and reports whether that failed,
// logging only when it starts or stops failing.
func (n *Node) beat(ctx context.Context, failedBefore bool) bool {
	err := n.cfg.Heartbeats.Beat(ctx, uint32(n.cfg.ID), n.cfg.Epoch, n.cfg.Now())
	failed := err != nil && ctx.Err() == nil
	switch {
	case failed && !failedBefore:
		n.cfg.Logger.Warn("heartbeat not recorded; if this lasts --failover-after, the cluster fences this node", "err", err)
	case !failed && failedBefore:
		n.cfg.Logger.Info("heartbeat recorded again")
	}
	return failed
}

// fenceSilent reads the heartbeat records and, while this process holds
// the lease, fences every silent node.
func (n *Node) fenceSilent(ctx context.Context, watch beatWatch) beatWatch {
	beats, err := n.cfg.Heartbeats.Beats(ctx)
	if err != nil {
		return watch // judge nothing on an old reading
	}
	now := n.cfg.Now()
	watch = watch.observe(beats, now)
	if _, held := n.LeaseHolder(); !held {
		return watch
	}
	v := n.plane.View()
	for _, dead := range watch.silent(&v, n.cfg.ID, now, n.cfg.FailoverAfter) {
		silentFor := now.Sub(watch[uint32(dead.ID)].since)
		r, err := n.plane.ProposeOne(ctx, &domain.FenceNode{By: n.Proposer(), Node: dead.ID, Epoch: dead.Epoch})
		if err != nil || !r.OK() {
			n.cfg.Logger.Warn("fencing a silent node failed; tried again next beat", "node", dead.ID, "epoch", dead.Epoch,
				"result", r.String(), "err", err)
			continue
		}
		n.cfg.Logger.Warn("fenced a node whose heartbeat stopped: its streams open on the next request for them",
			"node", dead.ID, "epoch", dead.Epoch, "silent_for", silentFor.Round(time.Millisecond))
	}
	return watch
}

// Fenced is closed once this process is no longer the registered one for
// its node id: another process registered, or the cluster fenced it. It
// can no longer commit anything and should stop; a restart rejoins at a
// fresh epoch.
func (n *Node) Fenced() <-chan struct{} { return n.fenced }

// checkFenced reports whether this process was fenced, closing Fenced the
// first time it sees so.
func (n *Node) checkFenced() bool {
	v := n.plane.View()
	if reg, ok := v.Node(n.cfg.ID); ok && reg.Epoch == n.cfg.Epoch {
		return false
	}
	n.fencedOnce.Do(func() {
		n.cfg.Logger.Error("this process was fenced: another process registered as this node, or the cluster found it silent",
			"node", n.cfg.ID, "epoch", n.cfg.Epoch)
		close(n.fenced)
	})
	return true
}
