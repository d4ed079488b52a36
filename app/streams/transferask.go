package streams

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Transfers asked of a node that does not write the stream. Only the
// writer may record a transfer of a stream it holds open (StartTransfer),
// so any other node records the request in the registry instead (a PutKV
// under TransferAskPrefix, which every version applies alike) and waits;
// the writer sees the request applied (node.takeTransfers), transfers the
// stream itself, and deletes the request.

// TransferAskPrefix starts the registry key of a transfer request; the
// stream's id follows, and the value is the target node.
const TransferAskPrefix = "transfer-ask/"

// transferAskWait bounds how long a node waits for the writer to take a
// transfer asked of it.
const transferAskWait = 10 * time.Second

// askTransfer records a request that writer node owner transfer st to to,
// and waits until the transfer is recorded.
func (s *Service) askTransfer(ctx context.Context, st stream, owner, to domain.NodeID) error {
	key := TransferAskPrefix + strconv.FormatUint(st.ID, 10)
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKV{By: s.cfg.By, Space: domain.SpaceRegistry, Key: key,
		Value: []byte(strconv.FormatUint(uint64(to), 10))})
	if err != nil || !r.OK() {
		return ports.Errorf(ports.ErrUnavailable, "asking node %d to transfer %s: %v %s", owner, st.Name, err, r)
	}
	deadline := time.Now().Add(transferAskWait)
	for {
		v := s.cfg.Plane.View()
		cur, ok := v.Stream(st.ID)
		switch {
		case !ok:
			return ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", st.Name)
		case v.PendingTransfer(cur) == to || (cur.Owner == to && v.IsOpen(cur)):
			return nil
		case time.Now().After(deadline):
			return ports.Errorf(ports.ErrUnavailable, "node %d, which writes %s, did not take the transfer within %v (a version without transfer requests?)",
				owner, st.Name, transferAskWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TakeTransferAsk transfers the stream that a request applied at row
// index names, if cmd is a transfer request and this node writes the
// stream, and then deletes the request.
func (s *Service) TakeTransferAsk(ctx context.Context, index uint64, cmd *domain.PutKV) {
	id, to, ok := parseTransferAsk(cmd)
	if !ok || s.cfg.Plane.WaitFor(ctx, index) != nil {
		return
	}
	v := s.cfg.Plane.View()
	st, found := v.Stream(id)
	if !found || !v.IsOpen(st) || st.Owner != s.cfg.By.Node {
		return // not this node's to do
	}
	if err := s.Transfer(ctx, st.Name, to); err != nil {
		s.cfg.Logger.Warn("a transfer asked of this node failed", "stream", st.Name, "to", to, "err", err)
	}
	if _, err := s.cfg.Plane.ProposeOne(ctx, &domain.DeleteKVIf{By: s.cfg.By, Space: domain.SpaceRegistry, Key: cmd.Key, IfRev: index}); err != nil {
		s.cfg.Logger.Warn("deleting a transfer request failed", "key", cmd.Key, "err", err)
	}
}

func parseTransferAsk(cmd *domain.PutKV) (id uint64, to domain.NodeID, ok bool) {
	rest, isAsk := strings.CutPrefix(cmd.Key, TransferAskPrefix)
	if cmd.Space != domain.SpaceRegistry || !isAsk {
		return 0, 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	node, err2 := strconv.ParseUint(string(cmd.Value), 10, 32)
	if err != nil || err2 != nil || node == 0 {
		return 0, 0, false
	}
	return id, domain.NodeID(node), true
}
