package subscriptions

import (
	"context"
	"strings"

	"github.com/picomq/pico/ports"
)

// Put creates a subscription idempotently; see ports.Subscriptions.
func (s *Service) Put(ctx context.Context, ref ports.SubscriptionRef, spec ports.SubscriptionSpec) (ports.Subscription, bool, error) {
	if err := checkRef(ref); err != nil {
		return ports.Subscription{}, false, err
	}
	spec, err := s.normalizeSpec(spec)
	if err != nil {
		return ports.Subscription{}, false, err
	}
	hash, created := configHash(spec), false
	rec, err := s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		created = false
		if cur != nil && !cur.deleted() {
			if cur.ConfigHash != hash {
				return nil, subErr(ports.ErrSubscriptionExists, "subscription %s exists with a different configuration", ref.ID)
			}
			return nil, nil
		}
		created = true
		return s.newRecord(ctx, ref, spec, hash, cur)
	})
	if err != nil {
		return ports.Subscription{}, false, err
	}
	sub, err := s.show(ctx, rec)
	return sub, created, err
}

// newRecord builds a subscription: explicit streams and the streams the
// pattern matches now are linked at their tails. after is the tombstone
// of an earlier subscription with this id, whose generation continues.
func (s *Service) newRecord(ctx context.Context, ref ports.SubscriptionRef, spec ports.SubscriptionSpec, hash string, after *record) (*record, error) {
	// Streams created from here on are linked from their start by the
	// delivery loop, so the scan point is read before the listing.
	v := s.cfg.Plane.View()
	r := &record{Root: ref.Root, ID: ref.ID, Type: spec.Type, Pattern: spec.Pattern, WebhookURL: spec.WebhookURL,
		WakeStream: spec.WakeStream, LeaseTTLMs: spec.LeaseTTL.Milliseconds(), Description: spec.Description,
		ConfigHash: hash, ControlURL: spec.ControlURL, CreatedMs: s.nowMs(), ScanFrom: v.NextStreamID}
	if after != nil {
		r.Generation = after.Generation
	}
	for _, p := range spec.Streams {
		if err := s.linkAtTail(ctx, r, p, true); err != nil {
			return nil, err
		}
	}
	if r.Pattern != "" {
		if err := s.backfill(ctx, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// backfill links the existing streams the pattern matches at their tails:
// a new subscription does not replay history.
func (s *Service) backfill(ctx context.Context, r *record) error {
	prefix := r.Root + literalPrefix(r.Pattern)
	after := ""
	for {
		page, err := s.cfg.Streams.List(ctx, prefix, after, 1000)
		if err != nil {
			return err
		}
		for _, info := range page.Streams {
			after = info.Name
			path := strings.TrimPrefix(info.Name, r.Root)
			if checkPath("stream", path) != nil || !matchGlob(r.Pattern, path) {
				continue
			}
			if l := r.link(path); l != nil {
				l.Glob = true
				continue
			}
			r.addLink(link{Path: path, Glob: true, StreamID: info.ID, Acked: info.Next})
		}
		if !page.HasMore {
			return nil
		}
	}
}

// Get returns a subscription; see ports.Subscriptions.
func (s *Service) Get(ctx context.Context, ref ports.SubscriptionRef) (ports.Subscription, error) {
	if err := checkRef(ref); err != nil {
		return ports.Subscription{}, err
	}
	v := s.cfg.Plane.View()
	r, _, err := readRecord(&v, recordKey(ref))
	if err == nil {
		err = live(r)
	}
	if err != nil {
		return ports.Subscription{}, err
	}
	s.linkNewStreams(r, s.scannedTo(recordKey(ref), r.CreatedMs)) // shown, not written: the loop writes them
	return s.show(ctx, r)
}

// Delete tombstones a subscription; see ports.Subscriptions.
func (s *Service) Delete(ctx context.Context, ref ports.SubscriptionRef) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	_, err := s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		if cur == nil || cur.deleted() {
			return nil, nil
		}
		return &record{Root: cur.Root, ID: cur.ID, Type: cur.Type, Generation: cur.Generation, DeletedMs: s.nowMs()}, nil
	})
	return err
}

// AddStreams links streams by name; see ports.Subscriptions.
func (s *Service) AddStreams(ctx context.Context, ref ports.SubscriptionRef, paths []string) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	paths, err := normalizePaths(paths)
	if err != nil {
		return err
	}
	_, err = s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		if err := live(cur); err != nil {
			return nil, err
		}
		for _, p := range paths {
			if err := s.linkAtTail(ctx, cur, p, true); err != nil {
				return nil, err
			}
		}
		return cur, nil
	})
	return err
}

// RemoveStream drops an explicit link; see ports.Subscriptions.
func (s *Service) RemoveStream(ctx context.Context, ref ports.SubscriptionRef, path string) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	path = normalizePath(path)
	_, err := s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		if err := live(cur); err != nil {
			return nil, err
		}
		l := cur.link(path)
		switch {
		case l == nil || !l.Explicit:
			return nil, nil
		case l.Glob:
			l.Explicit = false
		default:
			cur.removeLink(path)
		}
		return cur, nil
	})
	return err
}
