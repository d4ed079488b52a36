package meta

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// snapshotter writes a snapshot every SnapshotEvery rows in the background
// (encoding a large state must not stall the tailer) and truncates the log
// through the newest snapshot at least TruncateDelay old. The delay keeps
// the rows a lagging node still needs: a node whose rows were truncated must
// reinstall a snapshot, and its in-flight proposals learn only that their
// outcome is unknown.
type snapshotter struct {
	busy atomic.Bool
	// held stops new snapshots for good (Plane.HoldSnapshots).
	held atomic.Bool

	mu        sync.Mutex
	last      uint64         // index of the last snapshot written or installed
	lastBytes int            // its size
	written   []snapshotMark // written snapshots not yet truncated through, oldest first
	truncated uint64
}

// snapshotDue: every SnapshotEvery rows, but a large state is rewritten only
// once the rows since its last snapshot add up to an eighth of its size (or
// after 64 intervals, which bounds replay at a cold start). A million idle
// streams make a 60 MB snapshot; rewriting it for every 1024 small rows
// would cost far more than replaying them.
func snapshotDue(rows, every uint64, logBytes, snapBytes int) bool {
	return rows >= every && (logBytes*8 >= snapBytes || rows >= 64*every)
}

type snapshotMark struct {
	index uint64
	at    time.Time
}

func (t *tailer) maybeSnapshot(ctx context.Context) {
	s := t.snap
	if s.busy.Load() || s.held.Load() {
		return
	}
	now := time.Now()
	s.mu.Lock()
	take := snapshotDue(t.state.Index-min(s.last, t.state.Index), t.p.cfg.SnapshotEvery, t.logBytes, s.lastBytes)
	through := s.truncationPoint(now.Add(-t.p.cfg.TruncateDelay))
	s.mu.Unlock()
	if (!take && through == 0) || !s.busy.CompareAndSwap(false, true) {
		return
	}
	st := t.state // an immutable copy: later Applies do not touch it
	if take {
		t.logBytes = 0
	}
	t.p.snapshots.Go(func() {
		defer s.busy.Store(false)
		if take {
			t.writeSnapshot(ctx, &st, now)
		}
		if through > 0 {
			t.truncate(ctx, through)
		}
	})
}

// truncationPoint returns the newest written snapshot taken before cutoff
// that the log is not yet truncated through, or 0.
func (s *snapshotter) truncationPoint(cutoff time.Time) uint64 {
	var through uint64
	for _, m := range s.written {
		if m.at.After(cutoff) {
			break
		}
		through = m.index
	}
	return through
}

// writeSnapshot stores st in the newest snapshot version every node of the
// cluster reads; a state that version cannot carry waits for a later
// snapshot (the log keeps its rows meanwhile).
func (t *tailer) writeSnapshot(ctx context.Context, st *domain.State, now time.Time) {
	level := min(st.ClusterLevel(), t.p.cfg.Level)
	payload, err := domain.EncodeStateAt(st, domain.SnapshotVersionAt(level))
	if err != nil {
		t.p.logger.Info("metadata snapshot waits for every node to reach a newer feature level",
			"index", st.Index, "cluster_level", level, "err", err)
		return
	}
	if ctx.Err() != nil {
		return // the plane closed while the state was encoded
	}
	if err := t.p.log.PutSnapshot(ctx, ports.Snapshot{Index: st.Index, Payload: payload}); err != nil {
		if ctx.Err() == nil {
			t.p.logger.Warn("metadata snapshot failed", "index", st.Index, "err", err)
		}
		return
	}
	s := t.snap
	s.mu.Lock()
	s.last = max(s.last, st.Index)
	s.lastBytes = len(payload)
	s.written = append(s.written, snapshotMark{index: st.Index, at: now})
	s.mu.Unlock()
	t.p.logger.Debug("metadata snapshot stored", "index", st.Index, "bytes", len(payload))
}

func (t *tailer) truncate(ctx context.Context, through uint64) {
	if err := t.p.log.Truncate(ctx, through); err != nil {
		if ctx.Err() == nil {
			t.p.logger.Warn("metadata log truncation failed", "through", through, "err", err)
		}
		return
	}
	s := t.snap
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncated = max(s.truncated, through)
	for len(s.written) > 0 && s.written[0].index <= s.truncated {
		s.written = s.written[1:]
	}
}
