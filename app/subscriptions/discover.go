package subscriptions

import (
	"context"
	"strings"
)

// scanMark is how far the pattern of one incarnation of a subscription has
// been matched in this process; it is persisted only with a match, so
// streams that match nothing cost no writes.
type scanMark struct {
	createdMs int64
	next      uint64
}

// discover links, for the delivery loop, the streams created since the
// last scan that the pattern matches.
func (s *Service) discover(ctx context.Context, key string, r *record) {
	skip := s.scannedTo(key, r.CreatedMs)
	if v := s.cfg.Plane.View(); max(r.ScanFrom, skip) >= v.NextStreamID {
		return
	}
	var to uint64
	_, err := s.update(ctx, key, func(cur *record) (*record, error) {
		if cur == nil || cur.deleted() || cur.CreatedMs != r.CreatedMs {
			return nil, nil
		}
		linked := s.linkNewStreams(cur, skip)
		to = cur.ScanFrom
		return ifChanged(cur, linked), nil
	})
	if err != nil {
		s.cfg.Logger.Debug("linking new streams failed; retrying next tick", "subscription", r.ID, "err", err)
		return
	}
	s.mu.Lock()
	s.scanned[key] = scanMark{createdMs: r.CreatedMs, next: to}
	s.mu.Unlock()
}

// linkNewStreams links the streams created since the record's scan point
// that its pattern matches, from their start: a stream's first records are
// work too. Stream ids grow with every create, so the new streams are the
// ids from the scan point up. Ids below skip were already matched in this
// process. It reports whether a link was added or restarted.
func (s *Service) linkNewStreams(r *record, skip uint64) bool {
	if r.Pattern == "" {
		return false
	}
	v := s.cfg.Plane.View()
	linked := false
	for id := max(r.ScanFrom, skip); id < v.NextStreamID; id++ {
		st, ok := v.Stream(id)
		if !ok || st.SoftDeleted || !strings.HasPrefix(st.Name, r.Root) {
			continue
		}
		if path := st.Name[len(r.Root):]; checkPath("stream", path) == nil && matchGlob(r.Pattern, path) {
			linked = linkNewStream(r, path, id) || linked
		}
	}
	r.ScanFrom = max(r.ScanFrom, v.NextStreamID)
	return linked
}

// linkNewStream links a stream created after the subscription with its
// cursor at the start. A link to an older incarnation of the name starts
// over; one already at this incarnation (the create's own listing saw the
// stream) keeps its cursor.
func linkNewStream(r *record, path string, id uint64) bool {
	l := r.link(path)
	if l == nil {
		r.addLink(link{Path: path, Glob: true, StreamID: id})
		return true
	}
	changed := !l.Glob || l.StreamID < id
	l.Glob = true
	if l.StreamID < id {
		l.StreamID, l.Acked = id, 0
	}
	return changed
}

func (s *Service) scannedTo(key string, createdMs int64) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.scanned[key]; ok && m.createdMs == createdMs {
		return m.next
	}
	return 0
}

func (s *Service) forgetScan(key string) {
	s.mu.Lock()
	delete(s.scanned, key)
	s.mu.Unlock()
}
