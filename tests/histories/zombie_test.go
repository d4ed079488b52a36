package histories

import (
	"context"
	"testing"
	"time"

	"github.com/picomq/pico/tests/linearize"
)

// TestAZombieDoesNotAnswerForStreamsItsRestartTookOver: a process cut off
// from the log that clients still reach (a zombie: paused, or partitioned
// from the database), while a new process of its node starts at its
// address and writes its stream. The zombie must not report a tail the
// new process has moved past: its restart waits until the zombie's own
// tenure has run out.
func TestAZombieDoesNotAnswerForStreamsItsRestartTookOver(t *testing.T) {
	t.Parallel()
	c := newCluster(t, faults{}, timing{failoverAfter: 2 * time.Second, beatEvery: 250 * time.Millisecond}, 1)
	defer func() {
		if err := c.close(); err != nil {
			t.Error(err)
		}
	}()
	name := "/zombie"
	for _, in := range []linearize.Input{{Stream: name, Kind: linearize.Create}, {Stream: name, Kind: linearize.Append, Body: "a"}} {
		if out := c.do(1, in, 0); out.Outcome != linearize.OK {
			t.Fatalf("%s: %+v", in, out)
		}
	}
	zombie := c.at(1)
	c.crash(1)
	if out := c.do(1, linearize.Input{Stream: name, Kind: linearize.Append, Body: "b"}, 0); out.Outcome != linearize.OK || out.Offset != 1 {
		t.Fatalf("an append through the new process: %+v, want it at offset 1", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	out, err := run(ctx, zombie.node.Streams(), linearize.Input{Stream: name, Kind: linearize.Head}, 0)
	if err == nil && out.Next != 2 {
		t.Fatalf("the zombie reports the tail at %d, after the new process appended at offset 1", out.Next)
	}
}
