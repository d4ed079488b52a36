package node

import (
	"context"
	"time"

	"github.com/picomq/pico/ports"
)

// Tenure: how long this process may answer for the streams it writes.
//
// A watcher fences a node only once the node's heartbeat record has looked
// the same for FailoverAfter (failover.go). So if a beat that began at T
// was recorded and read back, and afterwards this process's view, caught
// up with the log, still shows it registered at its epoch, nobody can have
// taken its streams over before T + FailoverAfter. Until then, less a beat
// for clock rates, its in-memory state is still the truth. After that, a
// producer's gap, a stale epoch, a failed match, "closed" and even the
// tail it would read may be another owner's past: it answers 503
// (ErrUnavailable, retry) instead, until a beat is confirmed again or it
// finds itself fenced and stops. The stream service asks before it decides
// and again after a refusal or a read, so a pause between the two cannot
// stretch the window. A paused or cut-off process therefore never gives a
// final answer for a stream it may no longer own; what it acknowledges
// stays safe by the WAL fence anyway.

// confirmBeat records a beat that began at started as confirmed once the
// view has caught up with the log and still shows this registration.
func (n *Node) confirmBeat(ctx context.Context, started time.Time) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.BeatEvery)
	defer cancel()
	last, err := n.cfg.Log.LastIndex(ctx)
	if err != nil || n.plane.WaitFor(ctx, last) != nil {
		return
	}
	if v := n.plane.View(); !v.Superseded(n.Proposer()) {
		n.tenure.Store(&started)
	}
}

// Serving returns nil while this process may answer for its streams from
// its own state (see Tenure), else ErrUnavailable saying why. A fence in
// the view ends the tenure at once: a judge may have decided it on a
// silence from before the last confirmed beat.
func (n *Node) Serving() error {
	if n.cfg.Heartbeats == nil || n.cfg.FailoverAfter <= 0 {
		return nil // nobody fences a node for its silence
	}
	since := n.cfg.Now().Sub(*n.tenure.Load())
	if window := n.cfg.FailoverAfter - n.cfg.BeatEvery; since > window {
		return ports.Errorf(ports.ErrUnavailable, "this node's heartbeat has not been confirmed for %v: the cluster may have given its streams to another node; retry",
			since.Round(100*time.Millisecond))
	}
	if v := n.plane.View(); v.Superseded(n.Proposer()) {
		return ports.Errorf(ports.ErrUnavailable, "this node process was fenced: its streams open on another node; retry")
	}
	return nil
}
