package subscriptions

import (
	"context"
	"strings"
	"time"

	"github.com/picomq/pico/domain"
)

// tombstoneKeep is how long a deleted subscription's tombstone (and so its
// generation) outlives it.
const tombstoneKeep = time.Hour

// LeaseHolder reports whether this node holds the maintenance lease.
type LeaseHolder interface {
	Held() (epoch uint64, held bool)
}

// RunDelivery wakes workers every period, and soon after a request started
// a wake, until ctx ends, while this node holds the maintenance lease: one
// node delivers at a time. Correctness does not depend on that: every step
// is a compare-and-set on the subscription's record, so of two nodes only
// one takes a given attempt.
func (s *Service) RunDelivery(ctx context.Context, every time.Duration, lease LeaseHolder) {
	t := time.NewTicker(every)
	defer t.Stop()
	defer s.sends.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		if _, held := lease.Held(); held {
			s.tick(ctx)
		}
	}
}

// tick tends every subscription once.
func (s *Service) tick(ctx context.Context) {
	v := s.cfg.Plane.View()
	for _, key := range subscriptionKeys(&v) {
		if ctx.Err() != nil {
			return
		}
		r, rev, err := readRecord(&v, key)
		if err != nil {
			s.cfg.Logger.Warn("skipping an undecodable subscription", "key", key, "err", err)
			continue
		}
		if r.deleted() {
			s.purge(ctx, key, r, rev)
			continue
		}
		if r.Pattern != "" {
			s.discover(ctx, key, r)
		}
		if err := s.advance(ctx, key); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Debug("subscription step failed; retrying next tick", "subscription", r.ID, "err", err)
		}
	}
}

func subscriptionKeys(v *domain.State) []string {
	var keys []string
	v.KVFrom(domain.SpaceRegistry, keyPrefix, func(key string, _ domain.KVEntry) bool {
		if !strings.HasPrefix(key, keyPrefix) {
			return false
		}
		keys = append(keys, key)
		return true
	})
	return keys
}

// purge forgets a tombstone once it is old enough.
func (s *Service) purge(ctx context.Context, key string, r *record, rev uint64) {
	s.forgetScan(key)
	if s.nowMs()-r.DeletedMs < tombstoneKeep.Milliseconds() {
		return
	}
	_, err := s.cfg.Plane.ProposeOne(ctx, &domain.DeleteKVIf{By: s.cfg.By, Space: domain.SpaceRegistry, Key: key, IfRev: rev})
	if err != nil && ctx.Err() == nil {
		s.cfg.Logger.Debug("purging a subscription tombstone failed", "key", key, "err", err)
	}
}

// advance moves a subscription's wake along: it drops a wake whose
// worker's lease ran out, starts a wake when a linked stream has pending
// work, and takes the next due delivery attempt.
func (s *Service) advance(ctx context.Context, key string) error {
	var act action
	_, err := s.update(ctx, key, func(cur *record) (*record, error) {
		act = action{}
		if cur == nil || cur.deleted() {
			return nil, nil
		}
		return s.step(ctx, key, cur, &act)
	})
	if err == nil && act.kind != actNone {
		s.perform(ctx, key, act)
	}
	return err
}

// step decides advance's next state; nil leaves the record unchanged.
func (s *Service) step(ctx context.Context, key string, r *record, act *action) (*record, error) {
	now, changed := s.nowMs(), false
	if r.Wake != nil && r.Wake.leaseExpired(now) {
		r.Wake, changed = nil, true
	}
	var fresh *observation
	if r.Wake == nil {
		o, err := s.observe(ctx, r)
		if err != nil || !o.pending() {
			return ifChanged(r, changed), err
		}
		startWake(r, o, now)
		fresh, changed = &o, true
	}
	w := r.Wake
	if w.Delivered || w.Holder != "" || w.NextAttemptMs > now || s.sending(key) {
		return ifChanged(r, changed), nil
	}
	return r, s.attempt(ctx, r, fresh, act)
}

func ifChanged(r *record, changed bool) *record {
	if changed {
		return r
	}
	return nil
}
