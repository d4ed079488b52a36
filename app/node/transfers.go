package node

import (
	"context"
	"strings"
	"time"

	"github.com/picomq/pico/app/streams"
	"github.com/picomq/pico/domain"
)

// takeTransferFor bounds how long a target keeps trying to open a stream
// transferred to it while its writer lets it go.
const takeTransferFor = time.Minute

// takeTransfers has this node open every stream transferred to it as soon
// as it applies the transfer, rather than at the stream's next request:
// an idle stream changes hands in the time its writer takes to let go, and
// `pico admin transfer --wait` ends then.
//
// A writer asked to transfer a stream by another node (a transfer request
// in the registry) does so (streams.Service.TakeTransferAsk).
func (n *Node) takeTransfers(ctx context.Context) {
	n.plane.OnApplied(func(index uint64, cmd domain.Command, r domain.Result) {
		switch c := cmd.(type) {
		case *domain.StartTransfer:
			if c.To == n.cfg.ID && r.OK() {
				go n.takeTransfer(ctx, index, c.Stream)
			}
		case *domain.PutKV:
			if r.OK() && strings.HasPrefix(c.Key, streams.TransferAskPrefix) {
				go n.streams.TakeTransferAsk(ctx, index, c)
			}
		}
	})
}

// takeTransfer opens stream id, transferred to this node at row index,
// once its writer has let it go; it stops when the transfer is no longer
// pending here (this node or another took the stream, or it was deleted).
func (n *Node) takeTransfer(ctx context.Context, index, id uint64) {
	if n.plane.WaitFor(ctx, index) != nil {
		return
	}
	backoff := 20 * time.Millisecond
	for deadline := time.Now().Add(takeTransferFor); time.Now().Before(deadline); backoff = min(2*backoff, time.Second) {
		v := n.plane.View()
		st, ok := v.Stream(id)
		if !ok || v.PendingTransfer(st) != n.cfg.ID {
			return
		}
		// While its writer still holds it, an open would only be refused.
		if !v.IsOpen(st) {
			if _, err := n.engine.Open(ctx, id); err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
	n.cfg.Logger.Warn("could not open a stream transferred here; its next request opens it", "stream", id)
}
