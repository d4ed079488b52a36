package streams

import (
	"context"
	"time"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
)

// retentionPages bounds the records one sweep reads per stream looking for
// the retention cut, so one huge backlog cannot stall the others.
const retentionPages = 16

// unownedSweepTicks spaces out the lease holder's sweep of streams nobody
// holds open: it reads every stream in the view that can expire, so it
// runs once every this many local sweeps, not on each.
const unownedSweepTicks = 30

// reapAfterMs is the least age at which the sweep deletes an expired
// stream: one made already expired (Stream-TTL 0, an Expires-At in the
// past) is invisible at once, but its creator is still answering for it.
const reapAfterMs = 3_000

// RunRetention enforces record retention (StreamConfig.TTLSec) and stream
// expiry every period until ctx ends. Each node trims and expires the
// streams it holds open whose configuration is Timed, so a stream without
// time rules costs the sweep nothing; the maintenance lease holder also
// expires streams nobody holds open, every unownedSweepTicks periods.
// Every step is idempotent and retried next period.
func (s *Service) RunRetention(ctx context.Context, every time.Duration, lease engine.LeaseHolder) {
	t := time.NewTicker(every)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sweepLocal(ctx)
		if _, held := lease.Held(); held && tick%unownedSweepTicks == 0 {
			s.sweepUnowned(ctx)
		}
	}
}

func (s *Service) sweepLocal(ctx context.Context) {
	v := s.cfg.Plane.View()
	now := s.cfg.Now().UnixMilli()
	for _, id := range s.cfg.Engine.LocalTimed() {
		st, ok := v.Stream(id)
		if !ok {
			continue
		}
		cfg, err := domain.DecodeStreamConfig(st.Meta)
		switch {
		case err != nil:
		case s.expired(st, cfg):
			if now-st.CreatedMs >= reapAfterMs {
				s.expire(ctx, stream{st, cfg})
			}
		case cfg.TTLSec > 0 && st.Forks == 0: // forks pin their source's records
			s.retain(ctx, stream{st, cfg})
		}
	}
}

// sweepUnowned deletes expired streams that no live node holds open, and
// reclaims idle ones whose writer left no record of its last access (see
// unowned.go). Both need a configuration that can expire the stream, and
// only such streams are ever marked, so it visits those alone.
func (s *Service) sweepUnowned(ctx context.Context) {
	v := s.cfg.Plane.View()
	now := s.cfg.Now().UnixMilli()
	seen := unownedSince{}
	v.ExpiringStreams(func(st *domain.Stream) bool {
		if st.SoftDeleted {
			return ctx.Err() == nil
		}
		if v.IsOpen(st) { // its holder sweeps it; only a takeover of ours may be left to finish
			if mark, ok := s.takeoverToFinish(&v, st); ok {
				seen[st.ID] = mark
				s.reclaim(ctx, st.ID, mark)
			}
			return ctx.Err() == nil
		}
		cfg, err := domain.DecodeStreamConfig(st.Meta)
		switch {
		case err != nil:
		case s.expired(st, cfg):
			s.expire(ctx, stream{st, cfg})
		case s.idleSinceUnowned(st, cfg, now, seen):
			s.reclaim(ctx, st.ID, seen[st.ID])
		}
		return ctx.Err() == nil
	})
	s.unowned = seen
}

func (s *Service) expire(ctx context.Context, st stream) {
	if err := s.delete(ctx, st); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("deleting an expired stream failed", "stream", st.Name, "err", err)
		return
	}
	s.cfg.Logger.Info("stream expired", "stream", st.Name)
}

// retain trims the records older than the stream's TTL. Timestamps are
// monotonic per stream, so the cut is the first record young enough.
func (s *Service) retain(ctx context.Context, st stream) {
	h, ok := s.cfg.Engine.Held(st.ID)
	if !ok {
		return // let go since the sweep listed it
	}
	cutoff := s.cfg.Now().UnixMilli() - int64(st.cfg.TTLSec)*1000
	cut, from := st.Start, st.Start
	for range retentionPages {
		page, err := h.Read(ctx, from, 1024)
		if err != nil || len(page.Records) == 0 {
			break
		}
		young := len(page.Records)
		for i, r := range page.Records {
			if r.TimestampMs >= cutoff {
				young = i
				break
			}
		}
		cut = page.From + uint64(young)
		if young < len(page.Records) {
			break
		}
		from = cut
	}
	if cut <= st.Start {
		return
	}
	if _, err := h.Trim(ctx, cut); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("retention trim failed", "stream", st.Name, "err", err)
	}
}
