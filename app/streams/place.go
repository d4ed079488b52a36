package streams

import (
	"context"
	"errors"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// A new stream is placed by the metadata log as it applies the create
// (domain.PlaceStream): on the node with the lowest streams-per-slot ratio,
// each create seeing the ones before it, so a burst of creates spreads. A
// create without content placed on another node is answered here: the
// stream is empty, and its next request goes to its node. One with initial
// records or a close is redirected to the stream's node, which writes them
// (fillPlaced). Until every node reads placements (the cluster's feature
// level), and on a node that serves every stream where it is asked
// (Config.Place off), a stream is created on the node that is asked.

// placeRevival places a stream that nobody holds and whose home node is
// gone (fenced, left, or no longer registered), as a new one is placed: it
// records a transfer to the node placement picks, which takes the stream
// at once (node.takeTransfers), and returns that node's address. It
// returns "" to serve the stream here: placement picks this node, the
// stream is held or being transferred, or its home is a live node (a
// stream let go by a live node is revived where it is asked, as before).
func (s *Service) placeRevival(ctx context.Context, st stream) *ports.RedirectError {
	if !s.cfg.Place || s.isLocal(st.ID) {
		return nil
	}
	v := s.cfg.Plane.View()
	cur, ok := v.Stream(st.ID)
	if !ok || v.IsOpen(cur) || v.PendingTransfer(cur) != 0 || v.ClusterLevel() < domain.LevelPlacement {
		return nil
	}
	if home, ok := v.Node(cur.Owner); ok && home.Slots > 0 {
		return nil
	}
	to, placed := v.Place()
	if !placed || to == s.cfg.By.Node {
		return nil
	}
	if _, err := s.cfg.Plane.ProposeOne(ctx, &domain.StartTransfer{By: s.cfg.By, Stream: cur.ID, To: to}); err != nil {
		return nil // it is served here, as before placement
	}
	v = s.cfg.Plane.View()
	if cur, ok = v.Stream(st.ID); !ok {
		return nil
	}
	return s.ownerRedirect(&v, cur) // the transfer's target, or whoever took the stream meanwhile
}

// creation is the command that creates stream name with cfg; content says
// the create carries initial records or a close.
func (s *Service) creation(name string, cfg domain.StreamConfig, content bool) domain.Command {
	meta, now := domain.EncodeStreamConfig(cfg), s.cfg.Now().UnixMilli()
	if v := s.cfg.Plane.View(); s.cfg.Place && v.ClusterLevel() >= domain.LevelPlacement {
		return &domain.PlaceStream{By: s.cfg.By, Name: name, Meta: meta, Content: content, NowMs: now}
	}
	return &domain.CreateStream{By: s.cfg.By, Name: name, Meta: meta, Open: true, NowMs: now}
}

// placedElsewhere answers a create of stream id, just made as name, that
// was placed on another node (elsewhere true): the new stream's info, or,
// for a create with content, a redirect to that node.
func (s *Service) placedElsewhere(name string, id uint64, content bool) (info ports.StreamInfo, elsewhere bool, err error) {
	st, err := s.created(name, id)
	if err != nil {
		return ports.StreamInfo{}, true, err
	}
	if st.Owner == s.cfg.By.Node {
		return ports.StreamInfo{}, false, nil
	}
	v := s.cfg.Plane.View()
	r := s.ownerRedirect(&v, st.Stream)
	switch {
	case r == nil:
		return ports.StreamInfo{}, true, ports.Errorf(ports.ErrUnavailable, "stream %s was placed on node %d, which has no address", name, st.Owner)
	case content:
		return ports.StreamInfo{}, true, r
	}
	return s.info(st), true, nil
}

// fillPlaced writes the initial records and seal of a create redirected
// here by the node that placed the stream on this one (AwaitsCreate), if
// the stream is as placed: empty and unsealed. It reports whether it wrote
// them; a stream that is no longer so (another create filled it first) is
// answered as an existing one.
func (s *Service) fillPlaced(ctx context.Context, st stream, cfg domain.StreamConfig, initial []domain.Record, close bool) (bool, error) {
	if !st.AwaitsCreate || (len(initial) == 0 && !close) || configDiffers(st.cfg, cfg) != "" {
		return false, nil
	}
	empty, filled := uint64(0), false
	err := s.openAnd(ctx, st, func(h engine.Handle) error {
		if s.sealed(st.ID) {
			return nil // a close is accepted again on a closed stream: it is not this create's
		}
		_, err := h.Append(ctx, ports.AppendRequest{Records: initial, Close: close, MatchNext: &empty})
		filled = err == nil
		return err
	})
	if errors.Is(err, ports.ErrMatchFailed) || errors.Is(err, ports.ErrStreamClosed) {
		return false, nil
	}
	return filled, err
}

// headAfter answers a create that wrote the stream's content (err nil) or
// failed with err.
func (s *Service) headAfter(ctx context.Context, st stream, err error) (ports.StreamInfo, bool, error) {
	if err != nil {
		return ports.StreamInfo{}, false, err
	}
	info, err := s.head(ctx, st)
	return info, err == nil, err
}
