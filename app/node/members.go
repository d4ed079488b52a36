package node

import (
	"time"

	"github.com/picomq/pico/domain"
)

// Node states as this process sees them, for operators.
const (
	StateAlive = "alive" // its heartbeat moves
	// StateSuspect: its heartbeat has not moved for two beats or more; the
	// cluster fences it once that lasts the failover window.
	StateSuspect = "suspect"
	// StateFenced: no process runs its registration: the cluster fenced
	// it.
	StateFenced = "fenced"
	// StateLeft: no process runs its registration: it left on shutdown (a
	// leaving node fences itself).
	StateLeft = "left"
)

// Liveness says how node id looks from here: its state and for how long
// its heartbeat record has looked the same (good observation time, on this
// process's clock, so no clock skew enters). known is false before this
// process has read the records, or when nobody beats.
func (n *Node) Liveness(id domain.NodeID) (state string, quiet time.Duration, known bool) {
	v := n.plane.View()
	reg, registered := v.Node(id)
	if !registered {
		return "", 0, false
	}
	if id == n.cfg.ID && reg.Epoch == n.cfg.Epoch {
		since := n.cfg.Now().Sub(*n.tenure.Load()) // its last confirmed beat
		if n.Serving() != nil {
			return StateSuspect, since, true
		}
		return StateAlive, since, true
	}
	w := n.watch.Load()
	if w == nil {
		return "", 0, false
	}
	seen, ok := w.regs[id]
	switch {
	case !ok || seen.epoch != reg.Epoch:
		return "", 0, false // registered since the last reading
	case seen.beatAt.IsZero() && reg.Slots == 0 && reg.Left:
		return StateLeft, seen.quiet, true
	case seen.beatAt.IsZero() && reg.Slots == 0:
		return StateFenced, seen.quiet, true
	case seen.quiet >= 2*n.cfg.BeatEvery:
		return StateSuspect, seen.quiet, true
	}
	return StateAlive, seen.quiet, true
}
