package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// ErrNoPlacement: a drain has streams to move and no other node takes
// placements (none is registered with slots).
var ErrNoPlacement = errors.New("node: no other node takes new streams")

// DrainParallel bounds the streams one drain moves at once. Each move is a
// few log rows and a close on the writer (an upload of the stream's
// records): a handful at a time keeps the writer's uploads and the log
// busy without crowding out its appends.
const DrainParallel = 8

// Drain pacing: how long a move waits for its target to open the stream,
// how often it looks, and how many passes in a row may move nothing
// before a drain gives up (each pass retries every stream left, after a
// pause that grows with the passes).
const (
	drainMoveWait   = 30 * time.Second
	drainMoveLook   = 20 * time.Millisecond
	drainStallLimit = 5
	drainRetryPause = 500 * time.Millisecond
)

// DrainProgress is how a drain of a node stands, as this process sees it.
type DrainProgress struct {
	Node  domain.NodeID
	Slots uint32
	// Remaining counts the streams whose home is still the node, in the
	// view (domain.Node.Assigned): the drain is over at 0.
	Remaining int
	// Moved counts the streams that left the node during the drain this
	// process runs or ran last, whoever moved them.
	Moved int
	// Running: a drain of the node runs on this process.
	Running bool
	// FailedMoves counts the moves that failed (each stream is retried);
	// LastError is the latest failure, or why the drain stopped.
	FailedMoves int
	LastError   string
}

// drainRun is one drain of one node on this process: its counters, and
// the move it makes of each stream (moveOff; tests wrap it).
type drainRun struct {
	node domain.NodeID
	move func(ctx context.Context, id uint64) error

	mu       sync.Mutex
	moved    int
	failed   int
	lastErr  string
	finished bool
	// seen holds the streams found homed on the node, or whose move was
	// asked for, and not yet counted as moved: each counts once a pass no
	// longer finds it on the node and it still exists, whoever moved it
	// (this drain, a move whose answer was lost, a revival elsewhere).
	seen map[uint64]bool
}

func (r *drainRun) recordMove(id uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.moved++
		delete(r.seen, id)
		return
	}
	r.see(id)
	if !errors.Is(err, errGone) {
		r.failed++
		r.lastErr = err.Error()
	}
}

// countLeft counts as moved the streams seen before that are no longer
// homed on the node but still exist (exists reports that), and remembers
// those homed there now.
func (r *drainRun) countLeft(homed []uint64, exists func(uint64) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	still := make(map[uint64]bool, len(homed))
	for _, id := range homed {
		still[id] = true
		r.see(id)
	}
	for id := range r.seen {
		if !still[id] {
			delete(r.seen, id)
			if exists(id) {
				r.moved++
			}
		}
	}
}

func (r *drainRun) see(id uint64) {
	if r.seen == nil {
		r.seen = map[uint64]bool{}
	}
	r.seen[id] = true
}

func (r *drainRun) finish(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = true
	if err != nil {
		r.lastErr = err.Error()
	}
}

func (r *drainRun) isFinished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}

func (r *drainRun) movedSoFar() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.moved
}

// drains holds the drains this process runs or ran, the latest per node.
type drains struct {
	mu   sync.Mutex
	runs map[domain.NodeID]*drainRun
}

// DrainNode drains node id: it sets its slots to 0 (it takes no new
// streams), then moves every stream whose home it is to the node
// placement picks (domain.State.Place), DrainParallel at a time, in the
// background on this process. Asked again while that runs, it only
// reports; asked after it stopped, it starts again with the streams still
// left, so a drain resumes. It fails with ErrUnknownNode, or with
// ErrNoPlacement when streams are left and no other node takes
// placements.
func (n *Node) DrainNode(ctx context.Context, id domain.NodeID) (DrainProgress, error) {
	if n.streams == nil {
		return DrainProgress{}, ports.Errorf(ports.ErrUnavailable, "this node has no object store")
	}
	if err := n.SetSlots(ctx, id, 0); err != nil {
		return DrainProgress{}, err
	}
	if err := n.checkPlacement(id); err != nil {
		return n.DrainProgress(id), err
	}
	n.drains.mu.Lock()
	if run := n.drains.runs[id]; run == nil || run.isFinished() {
		n.startDrain(id)
	}
	n.drains.mu.Unlock()
	return n.DrainProgress(id), nil
}

// startDrain runs a new drain of node id in the background until it is
// over, gives up, or the node closes. Call it with drains.mu held.
func (n *Node) startDrain(id domain.NodeID) {
	run := n.newDrainRun(id)
	if n.drains.runs == nil {
		n.drains.runs = map[domain.NodeID]*drainRun{}
	}
	n.drains.runs[id] = run
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		err := n.drain(n.runCtx, run)
		if err != nil {
			n.cfg.Logger.Warn("a drain stopped before its node had no streams left; running it again continues it", "node", id, "err", err)
		}
		run.finish(err)
	}()
}

func (n *Node) newDrainRun(id domain.NodeID) *drainRun {
	run := &drainRun{node: id}
	run.move = func(ctx context.Context, stream uint64) error { return n.moveOff(ctx, id, stream) }
	return run
}

// DrainProgress reports the drain of node id: its slots and the streams
// left in the view, and what the drain this process runs or ran last has
// done.
func (n *Node) DrainProgress(id domain.NodeID) DrainProgress {
	p := DrainProgress{Node: id}
	n.drains.mu.Lock()
	run := n.drains.runs[id]
	n.drains.mu.Unlock()
	var seen []uint64
	if run != nil {
		run.mu.Lock()
		p.Moved, p.Running, p.FailedMoves, p.LastError = run.moved, !run.finished, run.failed, run.lastErr
		seen = slices.Collect(maps.Keys(run.seen))
		run.mu.Unlock()
	}
	// The view after the run's state: a run that ends in between shows
	// its last streams moved, never "stopped" with streams left; a stream
	// seen on the node and gone from it in this view counts as moved, so
	// Moved and Remaining add up at every moment.
	v := n.plane.View()
	for _, sid := range seen {
		if st, ok := v.Stream(sid); ok && st.Owner != id {
			p.Moved++
		}
	}
	if reg, ok := v.Node(id); ok {
		p.Slots, p.Remaining = reg.Slots, int(reg.Assigned)
	}
	return p
}

// DrainSelf drains this node as a stop begins (serve
// --shutdown-transfer), so that its streams change hands while it still
// serves them: it returns once none is left, or with ctx's error at its
// deadline. With no other node taking placements it moves nothing and
// returns ErrNoPlacement.
func (n *Node) DrainSelf(ctx context.Context) error {
	if n.streams == nil {
		return nil
	}
	if err := n.SetSlots(ctx, n.cfg.ID, 0); err != nil {
		return err
	}
	if err := n.checkPlacement(n.cfg.ID); err != nil {
		return err
	}
	return n.drain(ctx, n.newDrainRun(n.cfg.ID))
}

// checkPlacement fails with ErrNoPlacement if node id is home to streams
// and placement finds no node to move them to.
func (n *Node) checkPlacement(id domain.NodeID) error {
	v := n.plane.View()
	reg, ok := v.Node(id)
	if !ok || reg.Assigned == 0 {
		return nil
	}
	if _, ok := v.Place(); !ok {
		return fmt.Errorf("%w: node %d keeps its %d streams; give another node slots (pico admin set-slots) or start one", ErrNoPlacement, id, reg.Assigned)
	}
	return nil
}

// drain moves run.node's streams in passes: each pass moves every stream
// still homed there, DrainParallel at a time; a failed move is reported
// and retried in the next pass. It returns nil once the node is home to no
// stream, or an error when no node takes placements, drainStallLimit
// passes in a row moved nothing, or ctx ends.
func (n *Node) drain(ctx context.Context, run *drainRun) error {
	for stalled := 0; ; {
		ids := n.streamsHomedOn(run.node)
		run.countLeft(ids, n.streamExists)
		if len(ids) == 0 {
			return nil
		}
		before := run.movedSoFar()
		var unplaced atomic.Bool
		inParallel(ctx, ids, DrainParallel, func(ctx context.Context, id uint64) {
			err := run.move(ctx, id)
			switch {
			case errors.Is(err, errGone):
				run.recordMove(id, err) // counted if it turns out to have left
				return
			case errors.Is(err, ErrNoPlacement):
				unplaced.Store(true)
				return
			}
			if err != nil && ctx.Err() == nil {
				n.cfg.Logger.Warn("a drain could not move a stream; it tries again", "node", run.node, "stream", id, "err", err)
			}
			run.recordMove(id, err)
		})
		if unplaced.Load() {
			if err := n.checkPlacement(run.node); err != nil {
				return err
			}
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case run.movedSoFar() > before:
			stalled = 0
		default:
			stalled++
		}
		if stalled == drainStallLimit {
			return fmt.Errorf("node %d: no stream moved in %d passes", run.node, stalled)
		}
		if len(n.streamsHomedOn(run.node)) > 0 && !sleepCtx(ctx, time.Duration(stalled+1)*drainRetryPause) {
			return ctx.Err()
		}
	}
}

// streamExists reports whether stream id is in the view.
func (n *Node) streamExists(id uint64) bool {
	v := n.plane.View()
	_, ok := v.Stream(id)
	return ok
}

// streamsHomedOn lists the streams whose home is node id in the view.
func (n *Node) streamsHomedOn(id domain.NodeID) []uint64 {
	v := n.plane.View()
	if reg, ok := v.Node(id); !ok || reg.Assigned == 0 {
		return nil
	}
	var ids []uint64
	v.StreamsFrom("", func(st *domain.Stream) bool {
		if st.Owner == id {
			ids = append(ids, st.ID)
		}
		return true
	})
	return ids
}

// errGone: the stream a move was for is deleted, or expired (the
// retention sweep deletes it): nothing to move, nor to retry.
var errGone = errors.New("node: the stream is gone")

// moveOff transfers stream id from node from to the node placement picks
// (or to the target of a transfer already pending), through its writer
// wherever it runs, and returns once the stream's home is another node.
func (n *Node) moveOff(ctx context.Context, from domain.NodeID, id uint64) error {
	v := n.plane.View()
	st, ok := v.Stream(id)
	switch {
	case !ok:
		return errGone
	case st.Owner != from:
		return nil // moved meanwhile
	}
	to := v.PendingTransfer(st)
	if to == 0 {
		if to, ok = v.Place(); !ok {
			return fmt.Errorf("%w: stream %s stays on node %d", ErrNoPlacement, st.Name, from)
		}
	}
	err := n.countTransfer(n.streams.Transfer(ctx, st.Name, to))
	if errors.Is(err, ports.ErrStreamNotFound) || errors.Is(err, ports.ErrStreamGone) {
		return errGone
	}
	if err != nil {
		return fmt.Errorf("moving %s to node %d: %w", st.Name, to, err)
	}
	return n.awaitMoved(ctx, from, id, st.Name, to)
}

// awaitMoved waits until stream id's home is no longer node from: its
// target opens it as soon as its writer has let it go (takeTransfers).
func (n *Node) awaitMoved(ctx context.Context, from domain.NodeID, id uint64, name string, to domain.NodeID) error {
	deadline := time.Now().Add(drainMoveWait)
	for {
		v := n.plane.View()
		if st, ok := v.Stream(id); !ok || st.Owner != from {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d has not opened %s within %v", to, name, drainMoveWait)
		}
		if !sleepCtx(ctx, drainMoveLook) {
			return ctx.Err()
		}
	}
}

// inParallel calls fn for each id, at most limit at a time, and returns
// once every call has returned. Ids not yet started when ctx ends are
// skipped.
func inParallel(ctx context.Context, ids []uint64, limit int, fn func(context.Context, uint64)) {
	work := make(chan uint64)
	var wg sync.WaitGroup
	for range min(limit, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				fn(ctx, id)
			}
		}()
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		work <- id
	}
	close(work)
	wg.Wait()
}

// sleepCtx pauses for d, false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
