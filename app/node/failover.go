package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Failover without an operator. Every process records a heartbeat every
// BeatEvery (ports.Heartbeats, beside the log). Every process also watches
// the registrations in its view and their records, and fences (FenceNode)
// a registered node whose record at its registered epoch has looked the
// same for FailoverAfter of the watcher's good observation time. Its
// streams then count as closed, and the next request for one, on any node,
// opens it there: the open fences the old process's WAL in the object
// store and recovers every append it acknowledged (engine recovery).
//
// Every watcher judges, not only the lease holder: a dead holder's lease
// lasts its TTL, longer than the window, and the node that died may be
// that holder. So that one death is one proposal, not one per survivor, a
// watcher waits a beat longer for each node of a lower id that looks alive
// to it (the first of them fences; the others see that in their view).
//
// Silence is counted conservatively, on the watcher's own clock: between
// two good readings, only from the end of the earlier to the start of the
// later (the database took each snapshot somewhere in its reading), and
// only if that gap is at most two beats (a longer one means the watcher
// was stalled or blocked, and the others may have been too). A round is
// good if the watcher's beat and reading each worked (each call times out
// after a beat) and the reading shows that beat (the database took the
// write); a bad round counts nothing and breaks the chain of gaps, and
// after two in a row (an outage) a node needs four beats of fresh silence.
// So neither clock skew, a slow or stalled reading, nor a database that is
// down, hangs or loses writes fences a live node; a dead one is still
// fenced through bad rounds now and then, but not while every other round
// is bad (the warnings say so). Only a good round's evidence fences.
//
// A wrong verdict (a node paused, or cut off from the database) costs
// availability, never data: the fenced process can no longer commit, its
// WAL is fenced by the first takeover, and it sees the fence in its view
// (Fenced), lets the lease go and stops, to be restarted at a fresh epoch.
// A registration with no record at its epoch is judged too (a process that
// died before its first beat), if its node id ever beat (processes that do
// not beat at all, such as an older version, are never judged) and it has
// slots (FenceNode leaves one without slots or process behind).

// DefaultBeatEvery is the heartbeat interval: short, so that a death is
// noticed within seconds, and long enough that a beat, a reading and a
// confirmation, each a small query, fit in it on a busy database.
const DefaultBeatEvery = 500 * time.Millisecond

// olderReleaseWindow is the least window a node of an older release, one
// that declares no feature level, is judged by: such a node beats every
// 2.5 s and, by the defaults of its release, stops answering from its state
// only 17.5 s after its last confirmed beat, so a shorter window could
// fence it while it still answers. During a rolling upgrade its streams
// fail over as they did before.
const olderReleaseWindow = 20 * time.Second

// MinFailoverAfter is the shortest failover window an operator may set,
// and DefaultFailoverAfter the one a node runs with: four beats, so that a
// node that misses up to three in a row (a stall, a slow database) is not
// fenced, while a dead one's streams take appends elsewhere within the few
// seconds a client retries for.
const (
	MinFailoverAfter     = minSilentBeats * DefaultBeatEvery
	DefaultFailoverAfter = MinFailoverAfter
)

// minSilentBeats is the least silence, in beats, taken for a process's
// death: by failover, and by a start watching for a live holder of its
// node id (idguard.go).
const minSilentBeats = 4

// maxFencesPerRound bounds a round's proposal, which is one log row.
const maxFencesPerRound = 64

// seenRegistration is how a watcher saw a registered node process and its
// heartbeat record, and for how long it has looked so.
type seenRegistration struct {
	epoch  uint64        // the registered epoch
	beatAt time.Time     // the record at that epoch; zero: none
	beats  bool          // the node id has a record, at any epoch
	quiet  time.Duration // good observation time it has looked so
}

// beatWatch is what one process has seen of the registrations and their
// heartbeat records.
type beatWatch struct {
	regs    map[domain.NodeID]seenRegistration
	lastEnd time.Time // when the last good reading ended; zero after a bad round
	bad     int       // bad rounds in a row
}

// observe folds a good reading of the records, taken from start to end
// with v the view of the registrations, into w. The gap since the last
// good reading counts as quiet for what looks the same, if it is at most
// maxGap.
func (w beatWatch) observe(v *domain.State, beats []ports.Heartbeat, start, end time.Time, maxGap time.Duration) beatWatch {
	var gap time.Duration
	if !w.lastEnd.IsZero() {
		if d := start.Sub(w.lastEnd); d > 0 && d <= maxGap {
			gap = d
		}
	}
	records := make(map[uint32]ports.Heartbeat, len(beats))
	for _, b := range beats {
		records[b.Node] = b
	}
	next := beatWatch{regs: make(map[domain.NodeID]seenRegistration), lastEnd: end}
	v.Nodes(func(n *domain.Node) bool {
		seen := seenRegistration{epoch: n.Epoch}
		if b, ok := records[uint32(n.ID)]; ok {
			seen.beats = true
			if b.Epoch == n.Epoch {
				seen.beatAt = b.At
			}
		}
		if prev, ok := w.regs[n.ID]; ok && prev.epoch == seen.epoch && prev.beatAt.Equal(seen.beatAt) {
			seen.quiet = prev.quiet + gap
		}
		next.regs[n.ID] = seen
		return true
	})
	return next
}

// interrupted is w after a bad round: the next gap does not count. After
// two in a row (an outage, say) no node keeps more than keep of its quiet,
// so that quiet from before the outage cannot shorten by more than that the
// window of a node whose beats are slow to come back.
func (w beatWatch) interrupted(keep time.Duration) beatWatch {
	w.lastEnd = time.Time{}
	if w.bad++; w.bad >= 2 && len(w.regs) > 0 {
		regs := make(map[domain.NodeID]seenRegistration, len(w.regs))
		for id, seen := range w.regs {
			seen.quiet = min(seen.quiet, keep)
			regs[id] = seen
		}
		w.regs = regs
	}
	return w
}

// silent returns the processes registered in v, other than self, that have
// looked the same for after (or olderReleaseWindow, for a process that
// declares no feature level).
func (w beatWatch) silent(v *domain.State, self domain.NodeID, after time.Duration) []domain.Node {
	var out []domain.Node
	v.Nodes(func(n *domain.Node) bool {
		seen, ok := w.regs[n.ID]
		wait := after
		if _, declared := v.NodeLevel(n.ID); !declared {
			wait = max(after, olderReleaseWindow)
		}
		switch {
		case n.ID == self || !ok || seen.epoch != n.Epoch || seen.quiet < wait:
		case seen.beatAt.IsZero() && (!seen.beats || n.Slots == 0):
		default:
			out = append(out, *n)
		}
		return true
	})
	return out
}

// judgesBefore counts the processes registered in v with an id below
// self that look alive: a record at their epoch that has changed within
// alive.
func (w beatWatch) judgesBefore(v *domain.State, self domain.NodeID, alive time.Duration) int {
	count := 0
	v.Nodes(func(n *domain.Node) bool {
		if seen, ok := w.regs[n.ID]; ok && n.ID < self && seen.epoch == n.Epoch && !seen.beatAt.IsZero() && seen.quiet < alive {
			count++
		}
		return true
	})
	return count
}

// runHeartbeats beats for this process, watches the others' beats and
// fences the silent ones, until ctx ends or this process is fenced.
func (n *Node) runHeartbeats(ctx context.Context) {
	t := time.NewTicker(n.cfg.BeatEvery)
	defer t.Stop()
	var watch beatWatch
	var beats, readings failureLog
	for {
		if n.checkFenced() {
			return
		}
		if n.cfg.Heartbeats != nil {
			mine, beatErr := n.beat(ctx)
			if ctx.Err() != nil {
				return
			}
			n.failover.beatFailing.Store(beatErr != nil)
			beats.note(n.cfg.Logger, beatErr, "heartbeat not recorded; if this lasts --failover-after-sec, the cluster fences this node",
				"heartbeat recorded again")
			if n.cfg.FailoverAfter > 0 {
				watch = n.judge(ctx, watch, mine, &readings)
				shown := watch // Liveness reads it while the next round makes its own
				n.watch.Store(&shown)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// judge reads the heartbeats into watch and, on a good round, fences the
// silent nodes.
func (n *Node) judge(ctx context.Context, watch beatWatch, mine time.Time, readings *failureLog) beatWatch {
	watch, err := n.watchBeats(ctx, watch, mine)
	if ctx.Err() != nil {
		return watch
	}
	n.failover.readingsUnusable.Store(err != nil)
	readings.note(n.cfg.Logger, err, "heartbeat reading not usable: silences of other nodes are not counted meanwhile",
		"heartbeats read again")
	if err == nil { // judge on fresh evidence only
		n.confirmBeat(ctx, mine) // the reading shows this round's beat
		n.fenceSilent(ctx, watch)
	}
	return watch
}

// beat records this process's heartbeat, within a beat, and returns its
// time (zero if it failed).
func (n *Node) beat(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.BeatEvery)
	defer cancel()
	now := n.cfg.Now()
	if err := n.cfg.Heartbeats.Beat(ctx, uint32(n.cfg.ID), n.cfg.Epoch, now); err != nil {
		return time.Time{}, err
	}
	return now, nil
}

// errBadRound says why a round's reading did not count.
var errBadRound = errors.New("the reading does not show this process's beat of the round")

// watchBeats reads the records, within a beat, and folds a good round into
// watch (see the top of this file); mine is this round's beat, if it was
// recorded in time.
func (n *Node) watchBeats(ctx context.Context, watch beatWatch, mine time.Time) (beatWatch, error) {
	readCtx, cancel := context.WithTimeout(ctx, n.cfg.BeatEvery)
	defer cancel()
	v := n.plane.View()
	start := n.cfg.Now()
	beats, err := n.cfg.Heartbeats.Beats(readCtx)
	end := n.cfg.Now()
	if err == nil && (mine.IsZero() || !n.showsBeat(beats, mine)) {
		err = errBadRound
	}
	if err != nil {
		// After an outage a node needs four beats of fresh silence.
		return watch.interrupted(max(0, n.cfg.FailoverAfter-4*n.cfg.BeatEvery)), err
	}
	return watch.observe(&v, beats, start, end, 2*n.cfg.BeatEvery), nil
}

// fenceSilent fences the silent nodes in one proposal that may take a
// beat, so that beating and noticing its own fence are never held up; a
// proposal still pending then may yet commit, and the next round proposes
// again (FenceNode is idempotent). It waits a beat longer for each live
// judge of a lower id, which fences first.
func (n *Node) fenceSilent(ctx context.Context, watch beatWatch) {
	v := n.plane.View()
	after := n.cfg.FailoverAfter + time.Duration(watch.judgesBefore(&v, n.cfg.ID, 2*n.cfg.BeatEvery))*n.cfg.BeatEvery
	dead := watch.silent(&v, n.cfg.ID, after)
	if len(dead) == 0 {
		return
	}
	dead = dead[:min(len(dead), maxFencesPerRound)] // one row; the rest next round
	fences := make([]domain.Command, len(dead))
	for i, d := range dead {
		fences[i] = &domain.FenceNode{By: n.Proposer(), Node: d.ID, Epoch: d.Epoch}
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.BeatEvery)
	defer cancel()
	results, err := n.plane.Propose(ctx, fences...)
	if err != nil {
		n.cfg.Logger.Info("fencing silent nodes is not confirmed yet; proposed again next beat", "nodes", len(dead), "err", err)
		return
	}
	for i, r := range results {
		switch d := dead[i]; r.Code {
		case domain.ResultOK:
			n.failover.fenced.Add(1)
			n.cfg.Logger.Warn("fenced a node whose heartbeat stopped: the streams it held open, if any, open on the next request for them",
				"node", d.ID, "epoch", d.Epoch, "silent_for", watch.regs[d.ID].quiet.Round(time.Millisecond))
		case domain.ResultRedundant:
		default:
			n.cfg.Logger.Warn("fencing a silent node was refused", "node", d.ID, "epoch", d.Epoch, "result", r.String())
		}
	}
}

// showsBeat reports whether beats holds this process's beat at mine.
func (n *Node) showsBeat(beats []ports.Heartbeat, mine time.Time) bool {
	for _, b := range beats {
		if b.Node == uint32(n.cfg.ID) {
			return b.Epoch == n.cfg.Epoch && b.At.UnixMilli() == mine.UnixMilli()
		}
	}
	return false
}

// failoverStats are the heartbeat loop's gauges and counter, for Stats.
type failoverStats struct {
	beatFailing, readingsUnusable atomic.Bool
	fenced                        atomic.Int64
}

// failureLog logs when a recurring call starts or stops failing.
type failureLog struct{ failing bool }

func (f *failureLog) note(log *slog.Logger, err error, failed, recovered string) {
	switch {
	case err != nil && !f.failing:
		log.Warn(failed, "err", err)
	case err == nil && f.failing:
		log.Info(recovered)
	}
	f.failing = err != nil
}

// Fenced is closed once this process is no longer the registered one for
// its node id: another process registered, or the cluster fenced it. It
// can no longer commit anything and should stop; a restart rejoins at a
// fresh epoch.
func (n *Node) Fenced() <-chan struct{} { return n.fenced }

// FenceCause says why this process was fenced, once Fenced is closed.
func (n *Node) FenceCause() string {
	select {
	case <-n.fenced:
		return n.fenceCause
	default:
		return ""
	}
}

// checkFenced reports whether this process was fenced, closing Fenced the
// first time it sees so.
func (n *Node) checkFenced() bool {
	v := n.plane.View()
	if !v.Superseded(n.Proposer()) {
		return false
	}
	n.fencedOnce.Do(func() {
		reg, _ := v.Node(n.cfg.ID)
		n.fenceCause = fenceCause(reg, n.cfg.Epoch, n.cfg.Address)
		n.cfg.Logger.Error("this process was fenced: "+n.fenceCause, "node", n.cfg.ID, "epoch", n.cfg.Epoch)
		if n.stopLease != nil {
			n.stopLease() // judging and maintenance pass to a live node
		}
		close(n.fenced)
	})
	return true
}

// fenceCause explains a fence from the registration that superseded
// process epoch at address. A fence by the cluster (FenceNode) leaves the
// registration at epoch+1 with no slots; a newer process registers its
// own, larger epoch and its address.
func fenceCause(reg *domain.Node, epoch uint64, address string) string {
	switch {
	case reg.Epoch == epoch+1 && reg.Slots == 0:
		return "the cluster found its heartbeat stopped for the failover window (paused, or cut off from the metadata database)"
	case reg.Address != address:
		return fmt.Sprintf("another process registered as node %d at %s; unless this node moved there, two processes share one --node-id and will fence each other", reg.ID, reg.Address)
	default:
		return fmt.Sprintf("another process registered as node %d at this address (%s)", reg.ID, address)
	}
}
