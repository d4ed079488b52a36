package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// drainCluster starts nodes 1, 2 and 3 on one log and store, and creates
// streams /d/0 … /d/{count-1} on node 2, each holding one record.
func drainCluster(t *testing.T, count int) []*Node {
	t.Helper()
	c := newFailoverCluster(t)
	nodes := []*Node{c.start(1, nil, nil), c.start(2, nil, nil), c.start(3, nil, nil)}
	for _, n := range nodes {
		waitFor(t, "every registration", func() bool { v := n.View(); _, ok := v.Node(3); return ok })
	}
	ctx := context.Background()
	for i := range count {
		name := fmt.Sprintf("/d/%d", i)
		if _, _, err := nodes[1].Streams().Create(ctx, name, domain.StreamConfig{ContentType: "text/plain"}, nil, false); err != nil {
			t.Fatal(err)
		}
		if _, err := nodes[1].Streams().Append(ctx, name, ports.AppendRequest{Records: []domain.Record{{Body: []byte(name)}}}); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}

// awaitDrained waits until n reports node id drained and its drain over.
func awaitDrained(t *testing.T, n *Node, id domain.NodeID) DrainProgress {
	t.Helper()
	var p DrainProgress
	waitFor(t, fmt.Sprintf("node %d drained", id), func() bool {
		p = n.DrainProgress(id)
		return p.Remaining == 0 && !p.Running
	})
	return p
}

// wantMovedOff checks that every stream /d/i left node from, is open on
// another node and reads back its record there.
func wantMovedOff(t *testing.T, nodes []*Node, from domain.NodeID, count int) map[domain.NodeID]int {
	t.Helper()
	homes := map[domain.NodeID]int{}
	for i := range count {
		name := fmt.Sprintf("/d/%d", i)
		var st *domain.Stream
		waitFor(t, name+" open on its new node", func() bool {
			v := nodes[0].View()
			st, _ = v.StreamByName(name)
			return st.Owner != from && v.IsOpen(st)
		})
		homes[st.Owner]++
		r, err := nodes[st.Owner-1].Streams().Read(context.Background(), name, 0, ports.ReadLimits{})
		if err != nil || len(r.Records) != 1 || string(r.Records[0].Body) != name {
			t.Fatalf("%s on node %d: %v %v", name, st.Owner, r.Records, err)
		}
	}
	return homes
}

// A drain asked of node 1 moves every stream of node 2, which it does not
// write, to the nodes placement picks, and leaves node 2 without slots.
func TestDrainMovesEveryStreamToThePlacedNodes(t *testing.T) {
	const count = 24
	nodes := drainCluster(t, count)
	p, err := nodes[0].DrainNode(context.Background(), 2)
	if err != nil || p.Slots != 0 || p.Remaining != count {
		t.Fatalf("drain started: %+v %v; want slots 0 and %d streams left", p, err, count)
	}
	p = awaitDrained(t, nodes[0], 2)
	if p.Moved != count || p.FailedMoves != 0 || p.LastError != "" {
		t.Fatalf("drain over: %+v, want %d moved and no failure", p, count)
	}
	homes := wantMovedOff(t, nodes, 2, count)
	// Each move asks placement as the view stands, so the moves in flight
	// are the most by which the two shares may differ.
	if d := homes[1] - homes[3]; d > DrainParallel || d < -DrainParallel || homes[1]+homes[3] != count {
		t.Errorf("streams per node %v: want %d spread over nodes 1 and 3", homes, count)
	}
	if local := nodes[1].Engine().LocalCount(); local != 0 {
		t.Errorf("node 2 still writes %d streams", local)
	}
}

// drainOfNode2 is a drain of node 2 run by node 1, node 2's slots set to
// 0 as DrainNode sets them, that calls before ahead of each move: an error
// from it is the move's. A move once begun finishes even if the drain's
// context ends meanwhile, so the streams left after a stop are known.
func drainOfNode2(t *testing.T, nodes []*Node, before func(ctx context.Context, id uint64) error) *drainRun {
	t.Helper()
	if err := nodes[0].SetSlots(context.Background(), 2, 0); err != nil {
		t.Fatal(err)
	}
	run := nodes[0].newDrainRun(2)
	move := run.move
	run.move = func(ctx context.Context, id uint64) error {
		if err := before(ctx, id); err != nil {
			return err
		}
		return move(context.WithoutCancel(ctx), id)
	}
	return run
}

// drainToTheEnd runs run on n until it is over and reports what it did.
func drainToTheEnd(t *testing.T, n *Node, run *drainRun) DrainProgress {
	t.Helper()
	if err := n.drain(context.Background(), run); err != nil {
		t.Fatalf("drain: %v", err)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return DrainProgress{Moved: run.moved, FailedMoves: run.failed, LastError: run.lastErr}
}

// A drain stopped half way resumes when asked again: it moves only the
// streams left.
func TestDrainResumesWhereItStopped(t *testing.T) {
	const count = 20
	nodes := drainCluster(t, count)
	// The drain stops once four streams have moved.
	ctx, stop := context.WithCancel(context.Background())
	var first *drainRun
	first = drainOfNode2(t, nodes, func(ctx context.Context, _ uint64) error {
		if first.movedSoFar() >= 4 {
			stop()
		}
		return ctx.Err()
	})
	if err := nodes[0].drain(ctx, first); !errors.Is(err, context.Canceled) {
		t.Fatalf("a drain stopped half way: %v", err)
	}
	left := nodes[0].DrainProgress(2).Remaining
	if left == 0 || left != count-first.movedSoFar() {
		t.Fatalf("%d of %d streams left after %d moves: want some left, and no other", left, count, first.movedSoFar())
	}
	if _, err := nodes[0].DrainNode(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if p := awaitDrained(t, nodes[0], 2); p.Moved != left {
		t.Errorf("the resumed drain moved %d streams, want the %d left", p.Moved, left)
	}
	wantMovedOff(t, nodes, 2, count)
}

// A move that fails is reported and tried again in the next pass; the
// other streams move meanwhile.
func TestDrainRetriesAFailedMove(t *testing.T) {
	nodes := drainCluster(t, 6)
	run := drainOfNode2(t, nodes, failingOnceEach(func(id uint64) bool { return id%2 == 0 }))
	if p := drainToTheEnd(t, nodes[0], run); p.Moved != 6 || p.FailedMoves != 3 || !strings.Contains(p.LastError, "the writer did not answer") {
		t.Errorf("%+v; want 6 moved, 3 failed and the failure", p)
	}
	wantMovedOff(t, nodes, 2, 6)
}

// failingOnceEach fails the first move of each stream that fails says.
func failingOnceEach(fails func(id uint64) bool) func(context.Context, uint64) error {
	var tried sync.Map
	return func(_ context.Context, id uint64) error {
		if _, again := tried.LoadOrStore(id, true); !again && fails(id) {
			return errors.New("the writer did not answer")
		}
		return nil
	}
}

// A stream deleted before its move is neither moved nor a failure.
func TestDrainSkipsADeletedStream(t *testing.T) {
	nodes := drainCluster(t, 4)
	run := drainOfNode2(t, nodes, deletingTheFirst(t, nodes))
	if p := drainToTheEnd(t, nodes[0], run); p.Moved != 3 || p.FailedMoves != 0 {
		t.Errorf("%+v; want 3 moved and none failed", p)
	}
}

// deletingTheFirst deletes the stream of the first move before it begins.
func deletingTheFirst(t *testing.T, nodes []*Node) func(context.Context, uint64) error {
	var once sync.Once
	return func(ctx context.Context, id uint64) error {
		once.Do(func() {
			v := nodes[0].View()
			st, _ := v.Stream(id)
			if err := nodes[1].Streams().Delete(ctx, st.Name); err != nil {
				t.Error(err)
			}
			waitFor(t, "the delete applied", func() bool { v := nodes[0].View(); _, ok := v.Stream(id); return !ok })
		})
		return nil
	}
}

// inParallel runs limit calls at once, never more: the first limit calls
// wait for each other, which fewer at once would never get past.
func TestInParallelRunsLimitAtOnce(t *testing.T) {
	ids := make([]uint64, 50)
	var inFlight, most atomic.Int32
	all := make(chan struct{})
	var once sync.Once
	inParallel(context.Background(), ids, DrainParallel, func(context.Context, uint64) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		if now == DrainParallel {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
		case <-time.After(5 * time.Second):
			t.Error("fewer calls than the limit ran at once")
		}
	})
	if most.Load() != DrainParallel {
		t.Fatalf("%d calls at once, want %d", most.Load(), DrainParallel)
	}
}

// With no other node taking placements a drain fails clearly, moving
// nothing; a node home to no stream drains at once all the same.
func TestDrainWithNoOtherNode(t *testing.T) {
	c := newFailoverCluster(t)
	lone := c.start(1, nil, nil)
	ctx := context.Background()
	if _, err := lone.DrainNode(ctx, 1); err != nil {
		t.Fatalf("draining a node with no streams: %v", err)
	}
	awaitDrained(t, lone, 1)
	if err := lone.SetSlots(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := lone.Streams().Create(ctx, "/lone", domain.StreamConfig{ContentType: "text/plain"}, nil, false); err != nil {
		t.Fatal(err)
	}
	p, err := lone.DrainNode(ctx, 1)
	if !errors.Is(err, ErrNoPlacement) || !strings.Contains(err.Error(), "node 1 keeps its 1 streams") || p.Running || p.Slots != 0 {
		t.Fatalf("drain with no other node: %+v %v; want ErrNoPlacement, nothing running, slots 0", p, err)
	}
	if err := lone.DrainSelf(ctx); !errors.Is(err, ErrNoPlacement) {
		t.Fatalf("draining itself with no other node: %v", err)
	}
	if _, err := lone.DrainNode(ctx, 7); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("draining an unregistered node: %v", err)
	}
}

// A node draining itself as it stops returns once its streams are
// elsewhere.
func TestDrainSelf(t *testing.T) {
	const count = 10
	nodes := drainCluster(t, count)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := nodes[1].DrainSelf(ctx); err != nil {
		t.Fatal(err)
	}
	if p := nodes[1].DrainProgress(2); p.Remaining != 0 || p.Slots != 0 {
		t.Fatalf("after draining itself: %+v", p)
	}
	wantMovedOff(t, nodes, 2, count)
}
