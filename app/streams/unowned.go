package streams

import (
	"context"

	"github.com/picomq/pico/domain"
)

// A stream with an idle TTL that nobody holds open expires from the last
// access its writer recorded on letting it go (HandOff, then Service.expired).
// A writer that died recorded nothing. The lease holder then counts the
// idle window from when its sweep first found the stream unowned at its
// epoch: any access through the cluster opens a stream, at a higher epoch,
// which starts the count again.
//
// One writer escapes that rule: a superseded process still running (its
// node registered again, or was fenced, while it was paused or cut off)
// keeps serving the streams it held, at their old epoch, and may still
// acknowledge appends to its WAL. So the holder never deletes such a
// stream from the view alone: it takes the stream over first (reclaim),
// which fences that process's WAL and recovers what it acknowledged, and
// keeps the stream if that shows use.

// unownedSince marks, per stream, when the lease holder first found it
// unowned, and how it was then.
type unownedSince map[uint64]unownedMark

type unownedMark struct {
	epoch   uint64 // the stream epoch it was found unowned at
	end     uint64 // its committed end then
	sinceMs int64
}

// idleSinceUnowned reports whether st, unowned and with an idle TTL but no
// valid record of its last access, has been found so at its epoch for
// longer than that TTL. seen collects the marks for the next sweep.
func (s *Service) idleSinceUnowned(st *domain.Stream, cfg domain.StreamConfig, now int64, seen unownedSince) bool {
	if cfg.IdleTTLSec == 0 || (cfg.AccessedAtMs > 0 && cfg.AccessedAtEpoch == st.Epoch) || s.isLocal(st.ID) {
		return false // no idle TTL; judged from the record; or judged here, by its accesses
	}
	mark, ok := s.unowned[st.ID]
	if !ok || mark.epoch != st.Epoch {
		mark = unownedMark{epoch: st.Epoch, end: st.End, sinceMs: now}
	}
	seen[st.ID] = mark
	return now > mark.sinceMs+int64(cfg.IdleTTLSec)*1000
}

// reclaim takes over stream id, which idleSinceUnowned judged idle, and
// deletes it, unless the takeover shows use since mark: records beyond the
// end it had then (acknowledged by a superseded process, or by its writer
// before it died: either way its window starts again, which only lengthens
// it), an access served here meanwhile, or another open of it. Reads a
// superseded process served leave no trace and are not counted; from the
// takeover on, it cannot write.
//
// While the takeover runs the stream counts as not expired here, so nothing
// else drops it first. Once judged unused it refuses requests (unavailable:
// try again), so none gets in before the delete, and it is judged once
// more: a request that got in just before shows as an access or an append.
// (As for any expiry, a request between its lookup and its access being
// recorded is not seen.)
func (s *Service) reclaim(ctx context.Context, id uint64, mark unownedMark) {
	if !s.stillAsMarked(id, mark) {
		return // opened since (an access), or deleted: the next sweep judges it anew
	}
	s.access.setReclaim(id, judging)
	defer s.access.setReclaim(id, notReclaiming)
	s.hooks.run(s.hooks.beforeOpen, id)
	// The engine's open, not the service's: the takeover is no access.
	if _, err := s.cfg.Engine.Open(ctx, id); err != nil {
		return // open on another node (used), or the open failed: next sweep
	}
	st, unused := s.unusedSince(id, mark)
	if unused {
		s.hooks.run(s.hooks.judged, id)
		s.access.setReclaim(id, doomed)
		s.hooks.run(s.hooks.refusing, id)
		st, unused = s.unusedSince(id, mark)
	}
	if !unused {
		if s.isLocal(id) {
			s.access.touch(id, s.cfg.Now().UnixMilli()) // held here now: its window starts again
		}
		return
	}
	if cfg, err := domain.DecodeStreamConfig(st.Meta); err == nil {
		s.expire(ctx, stream{st, cfg})
	}
}

// unusedSince reports whether the takeover of stream id landed here at the
// epoch after the marked one and found neither records beyond the marked
// end nor an access since the mark; it returns the stream as it is now.
func (s *Service) unusedSince(id uint64, mark unownedMark) (*domain.Stream, bool) {
	v := s.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok || st.Epoch != mark.epoch+1 || !s.mine(st) {
		return nil, false // someone else opened it in between
	}
	tail, err := s.cfg.Engine.Tail(id)
	return st, err == nil && tail == mark.end && s.access.last(id) <= mark.sinceMs
}

// stillAsMarked reports whether stream id is as idleSinceUnowned marked it
// (unowned at the marked epoch), or taken over by this process at the next
// epoch with the recovery still to finish.
func (s *Service) stillAsMarked(id uint64, mark unownedMark) bool {
	v := s.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok || st.SoftDeleted {
		return false
	}
	if st.Epoch == mark.epoch {
		return !v.IsOpen(st)
	}
	_, finish := s.takeoverToFinish(&v, st)
	return finish
}

// takeoverToFinish finds a stream whose reclaim opened it here but failed
// to recover it: open here in the view, not in this process's memory. The
// sweep tries again, so the stream does not wait for a client to revive it.
func (s *Service) takeoverToFinish(v *domain.State, st *domain.Stream) (unownedMark, bool) {
	mark, ok := s.unowned[st.ID]
	if !ok || st.Epoch != mark.epoch+1 || !v.IsOpen(st) || !s.mine(st) || s.isLocal(st.ID) {
		return unownedMark{}, false
	}
	return mark, true
}

// mine reports whether st was opened by this process.
func (s *Service) mine(st *domain.Stream) bool {
	return st.Owner == s.cfg.By.Node && st.OwnerEpoch == s.cfg.By.Epoch
}

// reclaimHooks are called, when set, at points of a takeover: before its
// open; once it judged the stream unused, before it refuses requests; and
// once it refuses them, before it judges again.
type reclaimHooks struct{ beforeOpen, judged, refusing func(id uint64) }

func (reclaimHooks) run(hook func(uint64), id uint64) {
	if hook != nil {
		hook(id)
	}
}
