package subscriptions

import (
	"context"

	"github.com/picomq/pico/ports"
)

// streamTail is a stream's incarnation and tail; ID 0: no such stream.
type streamTail struct{ ID, Tail uint64 }

// tailOf looks a stream up through List, which neither opens the stream
// nor renews its idle TTL: following a stream must not keep it alive or
// move it. The tail is exact for streams open here, committed elsewhere.
func (s *Service) tailOf(ctx context.Context, name string) (streamTail, error) {
	page, err := s.cfg.Streams.List(ctx, name, "", 1)
	if err != nil {
		return streamTail{}, err
	}
	if len(page.Streams) == 0 || page.Streams[0].Name != name {
		return streamTail{}, nil
	}
	return streamTail{ID: page.Streams[0].ID, Tail: page.Streams[0].Next}, nil
}

// ackedFor is the link's cursor for incarnation t: a stream first seen, or
// deleted and created again, has nothing acknowledged yet.
func (l *link) ackedFor(t streamTail) uint64 {
	if t.ID != 0 && t.ID != l.StreamID {
		return 0
	}
	return l.Acked
}

// observation is every link against its stream's tail, read once.
type observation struct {
	snapshot []tail
	streams  []ports.LinkedStream
	// first is the first stream with pending work ("" when none).
	first string
}

func (o *observation) pending() bool { return o.first != "" }

func (s *Service) observe(ctx context.Context, r *record) (observation, error) {
	var o observation
	for i := range r.Links {
		l := &r.Links[i]
		t, err := s.tailOf(ctx, r.Root+l.Path)
		if err != nil {
			return o, err
		}
		acked := l.ackedFor(t)
		ls := ports.LinkedStream{Path: l.Path, Explicit: l.Explicit, Acked: acked, Tail: t.Tail, Pending: t.Tail > acked}
		if ls.Pending && o.first == "" {
			o.first = l.Path
		}
		o.streams = append(o.streams, ls)
		o.snapshot = append(o.snapshot, tail{Path: l.Path, StreamID: t.ID, Tail: t.Tail})
	}
	return o, nil
}

// linkAtTail links path (explicitly or through the pattern) at its stream's
// current tail; an existing link keeps its cursor and gains the kind.
func (s *Service) linkAtTail(ctx context.Context, r *record, path string, explicit bool) error {
	if l := r.link(path); l != nil {
		l.Explicit = l.Explicit || explicit
		l.Glob = l.Glob || !explicit
		return nil
	}
	t, err := s.tailOf(ctx, r.Root+path)
	if err != nil {
		return err
	}
	glob := !explicit || (r.Pattern != "" && matchGlob(r.Pattern, path))
	r.addLink(link{Path: path, Explicit: explicit, Glob: glob, StreamID: t.ID, Acked: t.Tail})
	return nil
}

// applyAcks moves cursors, all or none: every ack must name a linked
// stream and an offset between its cursor and its tail.
func (s *Service) applyAcks(ctx context.Context, r *record, acks []ports.StreamAck) error {
	type move struct {
		l *link
		t streamTail
		a uint64
	}
	moves := make([]move, 0, len(acks))
	for _, a := range acks {
		l := r.link(normalizePath(a.Path))
		if l == nil {
			return subErr(ports.ErrInvalidOffset, "stream %q is not linked to this subscription", a.Path)
		}
		t, err := s.tailOf(ctx, r.Root+l.Path)
		if err != nil {
			return err
		}
		switch {
		case a.Offset < l.ackedFor(t):
			return subErr(ports.ErrInvalidOffset, "ack for %q moves the cursor back", a.Path)
		case a.Offset > t.Tail:
			return subErr(ports.ErrInvalidOffset, "ack for %q is beyond the stream's tail", a.Path)
		}
		moves = append(moves, move{l, t, a.Offset})
	}
	for _, m := range moves {
		m.l.StreamID, m.l.Acked = m.t.ID, m.a
	}
	return nil
}

// ackSnapshot acknowledges every stream up to the tail a wake carried (a
// webhook's synchronous "done"). A cursor never moves back, and a stream
// created again since keeps its fresh cursor.
func ackSnapshot(r *record, snapshot []tail) {
	for _, t := range snapshot {
		l := r.link(t.Path)
		switch {
		case l == nil || t.StreamID == 0 || t.StreamID < l.StreamID:
		case t.StreamID > l.StreamID:
			l.StreamID, l.Acked = t.StreamID, t.Tail
		default:
			l.Acked = max(l.Acked, t.Tail)
		}
	}
}
