package streams

import (
	"context"
	"errors"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Transfer moves stream name to node to, which must be registered with
// slots. It records the transfer (StartTransfer) and, if this process
// writes the stream, lets it go (Engine.Close: every record committed to
// data objects), so to opens it from the metadata alone: as soon as it
// applies the transfer (node.takeTransfers), or at the next request, which
// every node sends there from now on. Until to opens it,
// no other node may (a target that loses its slots, or is fenced, ends the
// transfer: domain.State.PendingTransfer).
//
// A stream another live process writes can only be transferred by that
// process: this one asks it to (askTransfer) and waits. A transfer to the
// node that has the stream changes nothing; one again to the pending
// target only lets go of the stream here if this process still writes it
// (the retry of a transfer whose close failed). Appends during the
// transfer wait for the close, then go to the target.
func (s *Service) Transfer(ctx context.Context, name string, to domain.NodeID) error {
	st, err := s.lookup(ctx, name)
	if err != nil {
		return err
	}
	v := s.cfg.Plane.View()
	if v.IsOpen(st.Stream) && st.Owner != s.cfg.By.Node {
		if st.Owner == to {
			return nil // it is there already
		}
		return s.askTransfer(ctx, st, st.Owner, to)
	}
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.StartTransfer{By: s.cfg.By, Stream: st.ID, To: to})
	if err != nil {
		return ports.Errorf(ports.ErrUnavailable, "recording the transfer of %s: %v", name, err)
	}
	switch r.Code {
	case domain.ResultOK, domain.ResultRedundant:
	case domain.ResultInvalid:
		return ports.Errorf(ports.ErrBadRequest, "cannot transfer %s: %s", name, r.Reason)
	case domain.ResultNotFound:
		return ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", name)
	default:
		return ports.Errorf(ports.ErrStreamConflict, "cannot transfer %s: %s", name, r.Reason)
	}
	if to == s.cfg.By.Node {
		return nil
	}
	if err := s.letGo(ctx, st.ID); err != nil {
		return ports.Errorf(ports.ErrUnavailable,
			"the transfer of %s is recorded, but this node could not let it go (try again): %v", name, err)
	}
	return nil
}

// letGo closes stream id if this process writes it, as HandOff does: an
// idle-TTL stream first records its last access, from which the other
// nodes expire it while nobody holds it. A stream it opened at create and
// has not written yet is open in the metadata only: it is opened in the
// engine first, so that the close is recorded.
func (s *Service) letGo(ctx context.Context, id uint64) error {
	v := s.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok || !v.IsOpen(st) || st.Owner != s.cfg.By.Node {
		return nil // nobody here writes it
	}
	if _, err := s.cfg.Engine.Open(ctx, id); err != nil {
		return err
	}
	if err := s.recordAccesses(ctx, []uint64{id}); err != nil {
		return err
	}
	if err := s.cfg.Engine.Close(ctx, id); err != nil && !errors.Is(err, engine.ErrNotLocal) {
		return err
	}
	return nil
}
