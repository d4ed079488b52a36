package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
)

// ErrUnknownNode: SetSlots named a node that is not registered.
var ErrUnknownNode = errors.New("node: not registered")

// SetSlots sets a registered node's placement weight: new streams go to the
// node with the lowest streams-to-slots ratio, and 0 takes none (to drain a
// node before stopping it for good). Streams it holds stay where they are.
// A node's own process sets its weight again when it restarts (--slots).
// It returns once this node's view holds the change.
func (n *Node) SetSlots(ctx context.Context, id domain.NodeID, slots uint32) error {
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
