package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/domain"
)

// adminNode is the node as the admin listener sees it (adminhttp.Node).
type adminNode struct {
	*node.Node
	gatherer prometheus.Gatherer // the series beside the node's (adminhttp.Gatherer)
	logger   *slog.Logger
}

// Gatherer serves the request, append and store series on /metrics.
func (a adminNode) Gatherer() prometheus.Gatherer { return a.gatherer }

// Logger is the request log's logger.
func (a adminNode) Logger() *slog.Logger { return a.logger }

// SetSlots names the node's refusals with the listener's errors.
func (a adminNode) SetSlots(ctx context.Context, id domain.NodeID, slots uint32) error {
	return listenerError(a.Node.SetSlots(ctx, id, slots))
}

// DrainNode names the node's refusals with the listener's errors.
func (a adminNode) DrainNode(ctx context.Context, id domain.NodeID) (adminhttp.Drain, error) {
	p, err := a.Node.DrainNode(ctx, id)
	return drainOf(p), listenerError(err)
}

func (a adminNode) DrainProgress(id domain.NodeID) adminhttp.Drain {
	return drainOf(a.Node.DrainProgress(id))
}

func drainOf(p node.DrainProgress) adminhttp.Drain {
	return adminhttp.Drain{Node: uint32(p.Node), Slots: p.Slots, Remaining: p.Remaining, Moved: p.Moved,
		Running: p.Running, FailedMoves: p.FailedMoves, LastError: p.LastError}
}

// listenerError is a node's refusal as the listener's error of its kind.
func listenerError(err error) error {
	switch {
	case errors.Is(err, node.ErrUnknownNode):
		return adminhttp.ErrUnknownNode
	case errors.Is(err, node.ErrNoProcess):
		return fmt.Errorf("%w: %v", adminhttp.ErrNoProcess, err)
	case errors.Is(err, node.ErrNoPlacement):
		return fmt.Errorf("%w: %v", adminhttp.ErrNoPlacement, err)
	}
	return err
}
