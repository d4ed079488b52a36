package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/picomq/pico/app/node"
)

// defaultTransferDeadline is --shutdown-drain-sec with --shutdown-transfer
// when it is not given: enough for a node's streams to change hands a few
// at a time, and short enough that the rest of the stop (up to 30 s for
// requests in flight) still ends within a supervisor's usual grace period.
const defaultTransferDeadline = 20 * time.Second

// optionalBool is a boolean flag whose default is decided later ("auto"
// until given).
type optionalBool struct{ value *bool }

func (b *optionalBool) IsBoolFlag() bool { return true }

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.value = &v
	return nil
}

func (b *optionalBool) String() string {
	if b == nil || b.value == nil {
		return "auto"
	}
	return strconv.FormatBool(*b.value)
}

// or is the value given, else def.
func (b *optionalBool) or(def bool) bool {
	if b.value == nil {
		return def
	}
	return *b.value
}

// stopPlan is what a stop does before the listeners close: fail /ready
// for drain while still serving, or with transfer, move this node's
// streams to the others within drain.
type stopPlan struct {
	drain    time.Duration
	transfer bool
}

// stopPlan reads --shutdown-transfer (by default on unless the metadata
// log is SQLite, which serves one node: nobody could take its streams)
// and --shutdown-drain-sec (with the transfer, defaultTransferDeadline
// unless given).
func (f *serveFlags) stopPlan() stopPlan {
	p := stopPlan{drain: time.Duration(f.drainSec) * time.Second,
		transfer: f.shutdownTransfer.or(!strings.HasPrefix(f.metaURL, "sqlite:"))}
	if p.transfer && !f.drainSecGiven {
		p.drain = defaultTransferDeadline
	}
	return p
}

// shutdown drains (not ready, still serving; with plan.transfer, until
// the node's streams have changed hands), ends long-polls and SSE
// responses, stops the listeners once in-flight requests finish, and
// returns; the caller then closes the node, which hands back what it
// still holds and makes every buffered append durable.
func shutdown(n *node.Node, ls protocolListeners, admin *http.Server, done chan struct{}, plan stopPlan, logger *slog.Logger) error {
	n.Drain()
	switch {
	case plan.transfer && plan.drain > 0:
		transferAway(n, plan.drain, logger)
	case plan.drain > 0:
		logger.Info("draining before shutdown", "for", plan.drain)
		time.Sleep(plan.drain)
	}
	close(done)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, l := range ls {
		if err := l.srv.Shutdown(ctx); err != nil {
			logger.Warn(l.protocol+" listener did not stop cleanly", "err", err)
		}
	}
	if admin != nil {
		_ = admin.Shutdown(ctx)
	}
	logger.Info("pico node stopped")
	return nil
}

// transferAway moves this node's streams to the others while it still
// serves them (node.DrainSelf), so each changes hands under control
// rather than being reopened after the stop; what is left at the deadline
// the stop hands back.
func transferAway(n *node.Node, deadline time.Duration, logger *slog.Logger) {
	self := n.Proposer().Node
	streams := n.DrainProgress(self).Remaining
	if streams == 0 {
		return
	}
	logger.Info("moving this node's streams to the other nodes before stopping", "streams", streams, "deadline", deadline)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	switch err := n.DrainSelf(ctx); {
	case errors.Is(err, node.ErrNoPlacement):
		logger.Info("no other node takes streams: stopping without moving them", "streams", streams)
	case err != nil:
		logger.Warn("not every stream moved before the stop; the stop hands back the rest",
			"left", n.DrainProgress(self).Remaining, "err", err)
	default:
		logger.Info("moved this node's streams to the other nodes", "streams", streams, "in", time.Since(start).Round(time.Millisecond))
	}
}
