package engine

import (
	"math"

	"github.com/picomq/pico/domain"
)

// supersede drops the frames that a writer at a later stream epoch wrote
// over. A writer writes (a WAL frame, a commit, a compaction) only once it
// has recovered, and made durable, every record of its predecessors it
// could acknowledge. So an earlier writer's frame that reaches the first
// offset written at a later epoch holds nothing a takeover needs, and may
// hold records never acknowledged: read past a hole in its WAL, they would
// line up with a later committed end and replace a later writer's records.
// Reading several predecessors (Stream.Unrecovered) makes that possible.
func supersede(frames []domain.Frame, v *domain.State, st *domain.Stream) []domain.Frame {
	if len(frames) == 0 {
		return frames
	}
	starts := map[uint64]uint64{} // stream epoch -> the lowest offset written at it
	note := func(epoch, off uint64) {
		if cur, ok := starts[epoch]; !ok || off < cur {
			starts[epoch] = off
		}
	}
	for _, f := range frames {
		note(f.Epoch, f.Offset)
	}
	// Every committed range counts, also those wholly below the frames: a
	// later epoch's range below them means its writer recovered them.
	st.Objects.All(func(_, id uint64) bool {
		if obj, ok := v.Object(id); ok {
			r := obj.RangeOf(st.ID)
			note(r.Epoch, r.Start)
		}
		return true
	})
	kept := make([]domain.Frame, 0, len(frames))
	for _, f := range frames {
		limit := uint64(math.MaxUint64)
		for epoch, off := range starts {
			if epoch > f.Epoch {
				limit = min(limit, off)
			}
		}
		if f.End() <= limit {
			kept = append(kept, f)
		}
	}
	return kept
}
