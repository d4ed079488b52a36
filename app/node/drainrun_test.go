package node

import (
	"errors"
	"testing"
)

// TestDrainCountsAMoveWhoseAnswerWasLost: a move that failed, or looked
// gone, but whose stream left the node counts as moved once a pass no
// longer finds it there; a stream deleted meanwhile does not count, nor
// does one still on the node.
func TestDrainCountsAMoveWhoseAnswerWasLost(t *testing.T) {
	var r drainRun
	r.recordMove(1, nil)
	r.recordMove(2, errors.New("transfer: timeout"))
	r.recordMove(3, errGone)
	r.recordMove(4, errGone)
	r.recordMove(5, errors.New("transfer: timeout"))
	exists := func(id uint64) bool { return id != 4 } // 4 was deleted
	r.countLeft([]uint64{5}, exists)                  // 5 is still on the node
	if r.moved != 3 || r.failed != 2 {
		t.Fatalf("moved %d, failed %d; want 3 moved (1, 2, 3) and 2 failures", r.moved, r.failed)
	}
	r.countLeft(nil, exists)
	if r.moved != 4 {
		t.Fatalf("moved %d once 5 left too, want 4", r.moved)
	}
	r.countLeft(nil, exists)
	if r.moved != 4 {
		t.Fatalf("moved %d after another pass, want 4: each stream counts once", r.moved)
	}
}

// TestDrainCountsAStreamMovedByAnother: a stream found on the node by one
// pass and gone from it by the next counts as moved, though this drain
// never asked for its move (a client's request revived it elsewhere).
func TestDrainCountsAStreamMovedByAnother(t *testing.T) {
	var r drainRun
	exists := func(uint64) bool { return true }
	r.countLeft([]uint64{1, 2}, exists)
	r.recordMove(1, nil)
	r.countLeft(nil, exists)
	if r.moved != 2 {
		t.Fatalf("moved %d, want 2: 1 by this drain, 2 by another", r.moved)
	}
}
