package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
)

var (
	// ErrUnknownNode: SetSlots named a node that is not registered.
	ErrUnknownNode = errors.New("node: not registered")
	// ErrNoProcess: SetSlots would give slots to a registration that no
	// process runs (one a fence left behind, with none): the failover check
	// would take it for a process that died before its first heartbeat
	// and fence the node again. Its next start sets its slots (--slots).
	ErrNoProcess = errors.New("node: no process runs the registration")
)

// SetSlots sets a registered node's slots and returns once this node's view
// holds them. Slots are recorded, not yet used to place streams (which live
// where they are first created or opened); a transfer refuses a target with
// none, and a registration with none and no heartbeat at its epoch is not
// judged by the failover check. A node's restart sets its --slots again.
func (n *Node) SetSlots(ctx context.Context, id domain.NodeID, slots uint32) error {
	if slots > 0 {
		if err := n.checkRuns(ctx, id); err != nil {
			return err
		}
	}
	r, err := n.plane.ProposeOne(ctx, &domain.SetSlots{By: n.Proposer(), Node: id, Slots: slots})
	switch {
	case err != nil:
		return fmt.Errorf("node: set the slots of node %d: %w", id, err)
	case r.Code == domain.ResultNotFound:
		return fmt.Errorf("%w: node %d", ErrUnknownNode, id)
	case !r.OK():
		return fmt.Errorf("node: set the slots of node %d: %s", id, r)
	}
	return nil
}

// checkRuns refuses a registration without slots whose epoch has no
// heartbeat record: no process runs it (see ErrNoProcess).
func (n *Node) checkRuns(ctx context.Context, id domain.NodeID) error {
	v := n.plane.View()
	reg, ok := v.Node(id)
	if !ok || reg.Slots > 0 || id == n.cfg.ID || n.cfg.Heartbeats == nil {
		return nil
	}
	beats, err := n.cfg.Heartbeats.Beats(ctx)
	if err != nil {
		return fmt.Errorf("node: reading the heartbeats: %w", err)
	}
	for _, b := range beats {
		if b.Node == uint32(id) && b.Epoch == reg.Epoch {
			return nil
		}
	}
	return fmt.Errorf("%w: node %d at epoch %d has no heartbeat; its next start sets its slots", ErrNoProcess, id, reg.Epoch)
}
