package meta

import (
	"context"
	"sync/atomic"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// snapshotter writes a snapshot every SnapshotEvery rows in the background
// (encoding a large state must not stall the tailer) and truncates the log
// below the previous snapshot, so a node that lags by less than one interval
// catches up from rows instead of reinstalling.
type snapshotter struct {
	busy     atomic.Bool
	last     uint64 // index of the last snapshot written or installed
	previous uint64 // the one before: the truncation point
}

func (t *tailer) maybeSnapshot(ctx context.Context) {
	if t.snap == nil {
		t.snap = &snapshotter{}
		t.p.mu.Lock()
		t.snap.last = t.p.snapshot
		t.p.mu.Unlock()
	}
	s := t.snap
	if t.state.Index < s.last+t.p.cfg.SnapshotEvery || !s.busy.CompareAndSwap(false, true) {
		return
	}
	st := t.state // an immutable copy: later Applies do not touch it
	truncate := s.last
	s.previous, s.last = s.last, st.Index
	t.p.done.Add(1)
	go func() {
		defer t.p.done.Done()
		defer s.busy.Store(false)
		payload := domain.EncodeState(&st)
		if err := t.p.log.PutSnapshot(ctx, ports.Snapshot{Index: st.Index, Payload: payload}); err != nil {
			t.p.logger.Warn("metadata snapshot failed", "index", st.Index, "err", err)
			return
		}
		if truncate > 0 {
			if err := t.p.log.Truncate(ctx, truncate); err != nil {
				t.p.logger.Warn("metadata log truncation failed", "through", truncate, "err", err)
			}
		}
		t.p.logger.Debug("metadata snapshot stored", "index", st.Index, "bytes", len(payload), "truncated", truncate)
	}()
}
