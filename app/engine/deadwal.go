package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
)

// A process that dies (a crash, a kill, a fence by failover) leaves in its
// WAL the appends it acknowledged and had not uploaded yet. Any open of one
// of its streams recovers them, but until a client asks for that stream
// they reach neither data objects nor what reads only those (subscriptions,
// listings, reads on other nodes), and CollectDeadWALs keeps the whole WAL
// while any stream still names the process. So the maintenance lease holder
// takes over, soon after a process is superseded, each of its streams whose
// WAL records go beyond the committed end, and closes it again once they
// are committed. Streams whose records are all committed are left alone:
// naming the gone process costs their next open one read of a fenced WAL.

// deadWALPasses is what the dead-WAL passes (RecoverDeadWALs,
// CollectDeadWALs) keep between passes.
type deadWALPasses struct {
	at        time.Time       // the last pass
	again     bool            // the last recovery pass left work for the next tick
	nodes     uint64          // nodesFingerprint at the last pass
	after     string          // where the next collection lists from; under Engine.mu
	fenceKeys map[string]bool // keys found to hold fences, which stay; under Engine.mu
	// tails holds, per gone process whose WAL was read, fencedWAL.tails:
	// its WAL cannot change any more. Under Engine.mu.
	tails map[domain.Proposer]map[uint64]uint64
	// drained marks the gone processes whose WAL holds nothing a takeover
	// still needs, though streams name them: CollectDeadWALs may delete
	// their bulks. Under Engine.mu.
	drained map[domain.Proposer]bool
	// unclosed holds the streams takeovers opened here and could not
	// close, with the epoch they opened them at. Under Engine.mu.
	unclosed map[uint64]uint64
	// round is the listing of the WAL key space that CollectDeadWALs
	// spreads over passes: the nodesFingerprint it began at, and whether
	// it found keys of superseded processes but known fences. Once a
	// round finds none and no node changed meanwhile, listings stop
	// (quiet, at quietNodes) until a node registers or is fenced: only
	// then can a process become superseded, and a superseded process
	// adds no key but a fence once its WAL is fenced. Under Engine.mu.
	round struct {
		nodes uint64
		found bool
	}
	quiet      bool
	quietNodes uint64
	tookOver   atomic.Int64 // streams taken over, in all passes
	// running is set while startDeadWALPass's pass runs, in passes; the
	// fields above without a lock are that pass's.
	running atomic.Bool
	passes  sync.WaitGroup
}

// deadWALsEvery spaces the dead-WAL passes when no node registered or was
// fenced meanwhile: each walks every stream while a superseded process
// streams name is not drained, and lists the WAL key space until it holds
// nothing of superseded processes but fences.
const deadWALsEvery = time.Minute

// maxTakeoversPerPass bounds the streams one RecoverDeadWALs pass takes
// over; the next maintenance tick goes on. takeoverWorkers run them side by
// side. deadWALPassBudget bounds a pass's reads of gone WALs, which hold the
// lock client opens recovering from them need, and which takeovers it
// starts.
const (
	maxTakeoversPerPass = 256
	takeoverWorkers     = 8
	deadWALPassBudget   = 20 * time.Second
)

// RecoverDeadWALs takes over, here, every stream that a superseded process
// (its node re-registered or was fenced) still names and whose records in
// that process's WAL go beyond its committed end, up to
// maxTakeoversPerPass of them, and closes each again once they are
// committed. A stream open on a live process is that process's to recover.
// It marks the superseded processes none of whose named streams needs a
// takeover as drained, for CollectDeadWALs. Only the maintenance lease
// holder should call it. It returns how many streams it took over and
// whether any are left for another pass. It reads gone WALs and starts
// takeovers until budget ends; takeovers started run to their end, or
// until ctx ends.
func (e *Engine) RecoverDeadWALs(ctx, budget context.Context) (tookOver int, more bool, err error) {
	v := e.cfg.Plane.View()
	e.mu.Lock()
	drained, tails := e.deadWALs.drained, e.deadWALs.tails
	e.mu.Unlock()
	naming := map[domain.Proposer][]*domain.Stream{}
	if undrainedNamed(&v, drained) {
		v.StreamsNamingWALs(func(p domain.Proposer, st *domain.Stream) bool {
			if v.Superseded(p) {
				naming[p] = append(naming[p], st)
			}
			return true
		})
		drained = map[domain.Proposer]bool{}
		tails = map[domain.Proposer]map[uint64]uint64{}
	}
	var todo []uint64
	for p, streams := range naming {
		t, readErr := e.deadTails(budget, &v, p) // it holds e.fencing, which client opens need
		if readErr != nil {
			err = readErr
			continue
		}
		tails[p] = t
		drained[p] = true
		for _, st := range streams {
			if t[st.ID] <= st.End || st.SoftDeleted {
				continue // every record it holds of st is committed, or st is deleted (forks read only committed records)
			}
			drained[p] = false
			if e.needsTakeover(&v, st) {
				todo = append(todo, st.ID)
			}
		}
	}
	e.mu.Lock()
	e.deadWALs.tails, e.deadWALs.drained = tails, drained
	e.mu.Unlock()
	e.forgetFenced(naming, drained)
	todo = append(todo, e.unclosedTakeovers(&v)...)
	slices.Sort(todo)
	todo = slices.Compact(todo) // a stream may name several gone processes
	more = len(todo) > maxTakeoversPerPass
	todo = todo[:min(len(todo), maxTakeoversPerPass)]
	tookOver, takeErr := e.takeOverAll(ctx, budget, todo)
	e.deadWALs.tookOver.Add(int64(tookOver))
	if tookOver > 0 {
		more = true // the next pass finds their processes drained
		e.cfg.Logger.Info("took over streams gone processes left records of in their WALs", "streams", tookOver)
	}
	if takeErr != nil {
		err = takeErr
	}
	return tookOver, more, err
}

// undrainedNamed reports whether some stream names a superseded process
// that the last pass did not find drained; only then does a pass walk the
// streams. A drained process stays drained: its fenced WAL cannot change,
// its streams' committed ends only grow, and no stream comes to name a
// gone process (only the next open of a stream it held moves its naming
// to the unrecovered list).
func undrainedNamed(v *domain.State, drained map[domain.Proposer]bool) bool {
	found := false
	v.NamedWALs(func(p domain.Proposer, _ uint32) bool {
		found = v.Superseded(p) && !drained[p]
		return !found
	})
	return found
}

// needsTakeover reports whether the pass should open stream st, which
// names a gone process whose WAL holds records of it beyond its end: no
// live process holds it open, or this one does but no longer has it in
// memory (an earlier takeover's recovery failed after its open applied:
// opening it again finishes that recovery). A stream an open here is
// working on is that open's: a client may be waiting for it.
func (e *Engine) needsTakeover(v *domain.State, st *domain.Stream) bool {
	if e.transferElsewhere(v, st.ID) != 0 || e.opens.busy(st.ID) {
		return false // only its transfer's target may open it (as soon as it can); or the running open recovers it
	}
	if !v.IsOpen(st) {
		return true
	}
	_, local := e.local(st.ID)
	return e.writes(st) && !local
}

// unclosedTakeovers returns the streams earlier takeovers opened here and
// could not close, that this process still holds at the epoch it opened
// them at, and forgets the others.
func (e *Engine) unclosedTakeovers(v *domain.State) []uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []uint64
	for id, epoch := range e.deadWALs.unclosed {
		st, ok := v.Stream(id)
		if _, local := e.streams[id]; !ok || !local || st.Epoch != epoch || !v.IsOpen(st) || !e.writes(st) {
			delete(e.deadWALs.unclosed, id)
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// deadTails returns fencedWAL.tails of gone process p, fencing and reading
// its WAL the first time. It leaves in the open cache only the frames of
// streams a takeover still needs them for.
func (e *Engine) deadTails(ctx context.Context, v *domain.State, p domain.Proposer) (map[uint64]uint64, error) {
	e.mu.Lock()
	t, ok := e.deadWALs.tails[p]
	e.mu.Unlock()
	if ok {
		return t, nil
	}
	e.fencing.Lock()
	defer e.fencing.Unlock()
	w, err := e.fencedLocked(ctx, p)
	if err != nil {
		return nil, err
	}
	for id := range w.byStream {
		if st, ok := v.Stream(id); !ok || w.tails[id] <= st.End {
			e.dropFencedLocked(p, w, id) // a takeover would skip them all
		}
	}
	return w.tails, nil
}

// forgetFenced drops the cached WALs of gone processes that no takeover
// needs any more: drained, or named by no stream.
func (e *Engine) forgetFenced(naming map[domain.Proposer][]*domain.Stream, drained map[domain.Proposer]bool) {
	e.fencing.Lock()
	defer e.fencing.Unlock()
	for p := range e.fenced {
		if drained[p] || len(naming[p]) == 0 {
			delete(e.fenced, p)
		}
	}
}

// takeOverAll opens and closes the streams ids here, takeoverWorkers at a
// time, starting none once budget ends, and returns how many it did and the
// last error.
func (e *Engine) takeOverAll(ctx, budget context.Context, ids []uint64) (int, error) {
	var (
		mu   sync.Mutex
		done int
		last error
		wg   sync.WaitGroup
	)
	next := make(chan uint64)
	for range min(takeoverWorkers, len(ids)) {
		wg.Go(func() {
			for id := range next {
				took, err := e.takeOver(ctx, id)
				mu.Lock()
				if err != nil {
					last = err
				} else if took {
					done++
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		if budget.Err() != nil {
			break // the pass's budget is spent: the next pass goes on
		}
		next <- id
	}
	close(next)
	wg.Wait()
	return done, last
}

// takeOver opens stream id here, which recovers what earlier writers
// acknowledged and commits it, and closes it again, so that any node opens
// it next without reading a WAL; it reports whether it did. A stream it
// opened and could not close is closed by a later pass.
func (e *Engine) takeOver(ctx context.Context, id uint64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if _, err := e.Open(ctx, id); err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotOwner) {
			return false, nil // deleted, or opened elsewhere meanwhile: no longer ours to do
		}
		return false, err
	}
	s, ok := e.local(id)
	if !ok {
		return true, nil // closed meanwhile
	}
	err := e.Close(ctx, id)
	if errors.Is(err, ErrNotLocal) {
		err = nil // closed meanwhile
	}
	e.mu.Lock()
	if err != nil {
		e.deadWALs.unclosed[id] = s.epoch
	} else {
		delete(e.deadWALs.unclosed, id)
	}
	e.mu.Unlock()
	return err == nil, err
}

// DeadWALTakeovers counts the streams RecoverDeadWALs took over.
func (e *Engine) DeadWALTakeovers() int64 { return e.deadWALs.tookOver.Load() }

// nodesFingerprint changes whenever a node registers, re-registers or is
// fenced: then a process may have become superseded.
func nodesFingerprint(v *domain.State) uint64 {
	h := fnv.New64a()
	var buf [12]byte
	v.Nodes(func(n *domain.Node) bool {
		binary.LittleEndian.PutUint32(buf[:4], uint32(n.ID))
		binary.LittleEndian.PutUint64(buf[4:], n.Epoch)
		h.Write(buf[:])
		return true
	})
	return h.Sum64()
}
