package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// HoldCheckEvery is how often held grants are checked: a revoked or
// expired token's live reads end within it.
const HoldCheckEvery = 250 * time.Millisecond

// sweepEvery is how often the lease holder deletes expired records.
const sweepEvery = 10 * time.Second

// errHoldEnded is the cause of a held context that ended because its
// grant no longer holds.
var errHoldEnded = fmt.Errorf("%w: the token was revoked or has expired", ports.ErrUnauthenticated)

type hold struct {
	grant  ports.Grant
	cancel context.CancelCauseFunc
}

// Hold returns a context that Run ends once grant no longer holds
// (ports.Authorizer).
func (s *Service) Hold(ctx context.Context, grant ports.Grant) (context.Context, func()) {
	held, cancel := context.WithCancelCause(ctx)
	h := &hold{grant: grant, cancel: cancel}
	s.holdsMu.Lock()
	s.holds[h] = struct{}{}
	s.holdsMu.Unlock()
	return held, func() {
		s.holdsMu.Lock()
		delete(s.holds, h)
		s.holdsMu.Unlock()
		cancel(context.Canceled)
	}
}

// LeaseHolder says whether this process holds the maintenance lease.
type LeaseHolder interface{ Held() (uint64, bool) }

// Run ends the holds of grants that no longer hold and, while this process
// holds the lease, deletes expired records; until ctx ends.
func (s *Service) Run(ctx context.Context, lease LeaseHolder) {
	t := time.NewTicker(HoldCheckEvery)
	defer t.Stop()
	lastSweep := s.cfg.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.endStaleHolds()
		if _, held := lease.Held(); held && s.cfg.Now().Sub(lastSweep) >= sweepEvery {
			lastSweep = s.cfg.Now()
			s.SweepExpired(ctx)
		}
	}
}

func (s *Service) endStaleHolds() {
	v := s.cfg.Plane.View()
	now := s.cfg.Now().UnixMilli()
	s.holdsMu.Lock()
	defer s.holdsMu.Unlock()
	for h := range s.holds {
		if !s.stillHolds(&v, h.grant, now) {
			h.cancel(errHoldEnded)
			delete(s.holds, h)
		}
	}
}

// stillHolds reports whether grant's record is the one it was granted by
// and has not expired.
func (s *Service) stillHolds(v *domain.State, g ports.Grant, now int64) bool {
	e, ok := v.KV(domain.SpaceTokens, g.TokenID)
	return ok && e.Rev == g.Rev && !g.Scope.Expired(now)
}

// SweepExpired deletes every expired record, each only if it is still the
// record that expired.
func (s *Service) SweepExpired(ctx context.Context) {
	v := s.cfg.Plane.View()
	now := s.cfg.Now().UnixMilli()
	var expired []*domain.DeleteKVIf
	v.KVFrom(domain.SpaceTokens, "", func(id string, e domain.KVEntry) bool {
		if rec, _, ok := s.record(&v, id); ok && rec.Scope.Expired(now) {
			expired = append(expired, &domain.DeleteKVIf{By: s.cfg.By, Space: domain.SpaceTokens, Key: id, IfRev: e.Rev})
		}
		return true
	})
	for _, cmd := range expired {
		if _, err := s.cfg.Plane.ProposeOne(ctx, cmd); err != nil {
			s.cfg.Logger.Warn("expired token record not deleted", "id", cmd.Key, "err", err)
			return
		}
		s.forget(cmd.Key)
	}
}

func (s *Service) forget(id string) {
	s.mu.Lock()
	delete(s.records, id)
	s.mu.Unlock()
}
