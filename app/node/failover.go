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
// and stops (Fenced), to be restarted at a fresh epoch. A registration with
// no record at its epoch is judged like a record that stopped, from when the
// watcher first saw it, so a process that died before its first beat is
// fenced too.

// DefaultBeatEvery is the heartbeat interval.
const DefaultBeatEvery = 2500 * time.Millisecond

// MinFailoverAfter is the shortest failover window an operator may set:
// four beats, so that a node that misses one or two (a slow database, a
// pause) is not fenced.
const MinFailoverAfter = 4 * DefaultBeatEvery

// seenRegistration is how a watcher saw a registered node process and its
// heartbeat record, and since when it has looked so.
type seenRegistration struct {
	epoch  uint64    // the registered epoch
	beatAt time.Time // the record at that epoch; zero: none
	since  time.Time // the end of the first reading that showed it so
}

// beatWatch is what one process has seen of the registrations and their
// heartbeat records.
type beatWatch map[domain.NodeID]seenRegistration

// observe folds a reading of the records that ended at end, with v the
// view of the registrations, into w: any change restarts a silence.
func (w beatWatch) observe(v *domain.State, beats []ports.Heartbeat, end time.Time) beatWatch {
	records := make(map[uint32]ports.Heartbeat, len(beats))
	for _, b := range beats {
		records[b.Node] = b
	}
	next := make(beatWatch)
	v.Nodes(func(n *domain.Node) bool {
		seen := seenRegistration{epoch: n.Epoch, since: end}
		if b, ok := records[uint32(n.ID)]; ok && b.Epoch == n.Epoch {
			seen.beatAt = b.At
		}
		if prev, ok := w[n.ID]; ok && prev.epoch == seen.epoch && prev.beatAt.Equal(seen.beatAt) {
			seen.since = prev.since
		}
		next[n.ID] = seen
		return true
	})
	return next
}

// silent returns the processes registered in v, other than self, that have
// looked the same for after by start, when the last reading began: at
// least that long passed between the two readings. A registration with no
// record at its epoch counts only if it has slots: FenceNode leaves one
// with none and no process, which must not be fenced again.
func (w beatWatch) silent(v *domain.State, self domain.NodeID, start time.Time, after time.Duration) []domain.Node {
	var out []domain.Node
	v.Nodes(func(n *domain.Node) bool {
		seen, ok := w[n.ID]
		switch {
		case n.ID == self || !ok || seen.epoch != n.Epoch || start.Sub(seen.since) < after:
		case seen.beatAt.IsZero() && n.Slots == 0:
		default:
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
	var mine time.Time // this round's beat, zero if it failed
	failed := false
	for {
		if n.checkFenced() {
			return
		}
		if n.cfg.Heartbeats != nil {
			mine, failed = n.beat(ctx, failed)
			if n.cfg.FailoverAfter > 0 {
				watch = n.fenceSilent(ctx, watch, mine)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat records this process's heartbeat and returns its time, or zero and
// true when that failed, logging only when it starts or stops failing.
func (n *Node) beat(ctx context.Context, failedBefore bool) (time.Time, bool) {
	now := n.cfg.Now()
	err := n.cfg.Heartbeats.Beat(ctx, uint32(n.cfg.ID), n.cfg.Epoch, now)
	failed := err != nil && ctx.Err() == nil
	switch {
	case failed && !failedBefore:
		n.cfg.Logger.Warn("heartbeat not recorded; if this lasts --failover-after-sec, the cluster fences this node", "err", err)
	case !failed && failedBefore:
		n.cfg.Logger.Info("heartbeat recorded again")
	}
	if err != nil {
		return time.Time{}, failed
	}
	return now, false
}

// fenceSilent reads the heartbeat records and, while this process holds
// the lease, fences every silent node. A reading counts only if it worked,
// took less than a beat interval and shows this process's own beat of the
// round (mine): otherwise the watch starts over, so that neither a database
// outage, nor a database that takes no writes, nor a stalled reader turns
// beats it could not see into silence.
func (n *Node) fenceSilent(ctx context.Context, watch beatWatch, mine time.Time) beatWatch {
	v := n.plane.View()
	start := n.cfg.Now()
	beats, err := n.cfg.Heartbeats.Beats(ctx)
	end := n.cfg.Now()
	if err != nil || end.Sub(start) > n.cfg.BeatEvery || !n.showsBeat(beats, mine) {
		return nil
	}
	watch = watch.observe(&v, beats, end)
	if _, held := n.LeaseHolder(); !held {
		return watch
	}
	for _, dead := range watch.silent(&v, n.cfg.ID, start, n.cfg.FailoverAfter) {
		silentFor := start.Sub(watch[dead.ID].since)
		r, err := n.plane.ProposeOne(ctx, &domain.FenceNode{By: n.Proposer(), Node: dead.ID, Epoch: dead.Epoch})
		switch {
		case err != nil || !r.OK():
			n.cfg.Logger.Warn("fencing a silent node failed; tried again next beat", "node", dead.ID, "epoch", dead.Epoch,
				"result", r.String(), "err", err)
		case r.Code == domain.ResultOK:
			n.cfg.Logger.Warn("fenced a node whose heartbeat stopped: its streams open on the next request for them",
				"node", dead.ID, "epoch", dead.Epoch, "silent_for", silentFor.Round(time.Millisecond))
		}
	}
	return watch
}

// showsBeat reports whether beats holds this process's beat at mine.
func (n *Node) showsBeat(beats []ports.Heartbeat, mine time.Time) bool {
	for _, b := range beats {
		if b.Node == uint32(n.cfg.ID) {
			return !mine.IsZero() && b.Epoch == n.cfg.Epoch && b.At.UnixMilli() == mine.UnixMilli()
		}
	}
	return false
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
		if n.stopLease != nil {
			n.stopLease() // judging and maintenance pass to a live node
		}
		close(n.fenced)
	})
	return true
}
