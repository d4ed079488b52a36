package streams

import (
	"context"
	"fmt"
	"slices"

	"github.com/picomq/pico/domain"
)

// HandOff gives every stream this process holds back to the cluster
// (Engine.CloseAll), first recording in each idle-TTL stream's config that
// it was held until now: only this process knows its accesses, and the
// lease holder needs a time to expire the stream from while nobody holds
// it. Call it once nothing else uses the service (the node does, after its
// listeners stopped): then no access is later than the time recorded.
// Streams that cannot be recorded are handed back all the same, to start
// their window again with their next writer.
func (s *Service) HandOff(ctx context.Context) error {
	if err := s.recordAccesses(ctx, s.cfg.Engine.LocalTimed()); err != nil { // idle TTLs are timed
		s.cfg.Logger.Warn("recording the last accesses of idle-TTL streams failed", "err", err)
	}
	return s.cfg.Engine.CloseAll(ctx)
}

// handOffBatch bounds the commands of one proposal.
const handOffBatch = 128

// recordAccesses records in the config of each idle-TTL stream of ids that
// this process writes that it was accessed until now (see HandOff).
func (s *Service) recordAccesses(ctx context.Context, ids []uint64) error {
	v := s.cfg.Plane.View()
	now := s.cfg.Now().UnixMilli()
	var cmds []domain.Command
	for _, id := range ids {
		st, ok := v.Stream(id)
		if !ok || !v.IsOpen(st) {
			continue
		}
		cfg, err := domain.DecodeStreamConfig(st.Meta)
		if err != nil || cfg.IdleTTLSec == 0 {
			continue
		}
		cfg.AccessedAtMs, cfg.AccessedAtEpoch = now, st.Epoch
		cmds = append(cmds, &domain.SetStreamMeta{By: s.cfg.By, Stream: id, Epoch: st.Epoch, Meta: domain.EncodeStreamConfig(cfg)})
	}
	refused := 0
	for batch := range slices.Chunk(cmds, handOffBatch) {
		rs, err := s.cfg.Plane.Propose(ctx, batch...)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if !r.OK() {
				refused++
			}
		}
	}
	if refused > 0 {
		return fmt.Errorf("%d of %d streams refused the record (no longer written here)", refused, len(cmds))
	}
	return nil
}
