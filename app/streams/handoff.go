package streams

import (
	"context"
	"slices"

	"github.com/picomq/pico/domain"
)

// HandOff gives every stream this process holds back to the cluster
// (Engine.CloseAll), first recording in each idle-TTL stream's config when
// it was last read or written: only this process knows, and the lease
// holder needs it to expire the stream while nobody holds it. Streams that
// cannot be recorded are handed back all the same, to start their window
// again with their next writer.
func (s *Service) HandOff(ctx context.Context) error {
	if err := s.recordAccesses(ctx); err != nil {
		s.cfg.Logger.Warn("recording the last accesses of idle-TTL streams failed", "err", err)
	}
	return s.cfg.Engine.CloseAll(ctx)
}

// handOffBatch bounds the commands of one proposal.
const handOffBatch = 128

func (s *Service) recordAccesses(ctx context.Context) error {
	v := s.cfg.Plane.View()
	var cmds []domain.Command
	for _, id := range s.cfg.Engine.Local() {
		st, ok := v.Stream(id)
		if !ok || !v.IsOpen(st) {
			continue
		}
		cfg, err := domain.DecodeStreamConfig(st.Meta)
		if err != nil || cfg.IdleTTLSec == 0 {
			continue
		}
		cfg.AccessedAtMs = max(cfg.AccessedAtMs, st.CreatedMs, s.access.last(id))
		cmds = append(cmds, &domain.SetStreamMeta{By: s.cfg.By, Stream: id, Epoch: st.Epoch, Meta: domain.EncodeStreamConfig(cfg)})
	}
	for batch := range slices.Chunk(cmds, handOffBatch) {
		if _, err := s.cfg.Plane.Propose(ctx, batch...); err != nil {
			return err
		}
	}
	return nil
}
