package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/domain"
)

// adminNode is the node as the admin listener sees it (adminhttp.Node).
type adminNode struct{ *node.Node }

// SetSlots names the node's refusals with the listener's errors.
func (a adminNode) SetSlots(ctx context.Context, id domain.NodeID, slots uint32) error {
	err := a.Node.SetSlots(ctx, id, slots)
	switch {
	case errors.Is(err, node.ErrUnknownNode):
		return adminhttp.ErrUnknownNode
	case errors.Is(err, node.ErrNoProcess):
		return fmt.Errorf("%w: %v", adminhttp.ErrNoProcess, err)
	}
	return err
}
