package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// HeartbeatsOpener returns fresh heartbeats with no record, and a function
// that opens another handle onto the same records (nil when the store
// cannot be shared), registering any cleanup with t.Cleanup.
type HeartbeatsOpener func(t *testing.T) (ports.Heartbeats, func() ports.Heartbeats)

// Heartbeats runs the heartbeats suite.
func Heartbeats(t *testing.T, open HeartbeatsOpener) {
	t.Run("BeatReplacesSameEpoch", func(t *testing.T) { testBeatReplaces(t, open) })
	t.Run("OlderEpochIgnored", func(t *testing.T) { testOlderEpochIgnored(t, open) })
	t.Run("NodeOrder", func(t *testing.T) { testBeatsNodeOrder(t, open) })
	t.Run("RacingEpochsNewestWins", func(t *testing.T) { testRacingBeats(t, open) })
	t.Run("SharedBetweenHandles", func(t *testing.T) { testBeatsShared(t, open) })
}

func mustBeat(ctx context.Context, t *testing.T, h ports.Heartbeats, node uint32, epoch uint64, now time.Time) {
	t.Helper()
	if err := h.Beat(ctx, node, epoch, now); err != nil {
		t.Fatalf("Beat(%d, %d, %v): %v", node, epoch, now.Sub(start), err)
	}
}

func expectBeats(ctx context.Context, t *testing.T, h ports.Heartbeats, want ...ports.Heartbeat) {
	t.Helper()
	got, err := h.Beats(ctx)
	if err != nil {
		t.Fatalf("Beats: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("Beats = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Node != want[i].Node || got[i].Epoch != want[i].Epoch || !got[i].At.Equal(want[i].At) {
			t.Fatalf("Beats = %v, want %v", got, want)
		}
	}
}

func beat(node uint32, epoch uint64, d time.Duration) ports.Heartbeat {
	return ports.Heartbeat{Node: node, Epoch: epoch, At: at(d)}
}

func testBeatReplaces(t *testing.T, open HeartbeatsOpener) {
	ctx := testContext(t)
	h, _ := open(t)
	expectBeats(ctx, t, h)
	mustBeat(ctx, t, h, 1, 5, at(0))
	expectBeats(ctx, t, h, beat(1, 5, 0))
	mustBeat(ctx, t, h, 1, 5, at(2500*time.Millisecond))
	expectBeats(ctx, t, h, beat(1, 5, 2500*time.Millisecond))
	mustBeat(ctx, t, h, 1, 5, at(2500*time.Millisecond)) // idempotent
	expectBeats(ctx, t, h, beat(1, 5, 2500*time.Millisecond))
}

func testOlderEpochIgnored(t *testing.T, open HeartbeatsOpener) {
	ctx := testContext(t)
	h, _ := open(t)
	mustBeat(ctx, t, h, 1, 6, at(time.Second))
	mustBeat(ctx, t, h, 1, 5, at(3*time.Second)) // a superseded process, still running
	expectBeats(ctx, t, h, beat(1, 6, time.Second))
	mustBeat(ctx, t, h, 1, 7, at(0)) // a newer process, whatever its clock says
	expectBeats(ctx, t, h, beat(1, 7, 0))
}

func testBeatsNodeOrder(t *testing.T, open HeartbeatsOpener) {
	ctx := testContext(t)
	h, _ := open(t)
	for _, n := range []uint32{3, 1, 200, 2} {
		mustBeat(ctx, t, h, n, uint64(n)*10, at(time.Duration(n)*time.Second))
	}
	expectBeats(ctx, t, h, beat(1, 10, time.Second), beat(2, 20, 2*time.Second), beat(3, 30, 3*time.Second),
		beat(200, 2000, 200*time.Second))
}

// testRacingBeats beats one node from many goroutines at many epochs: the
// record ends at the newest, whatever the order they land in.
func testRacingBeats(t *testing.T, open HeartbeatsOpener) {
	ctx := testContext(t)
	h, _ := open(t)
	const beaters = 16
	var wg sync.WaitGroup
	errs := make(chan error, beaters)
	for i := range beaters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 4 {
				if err := h.Beat(ctx, 9, uint64(i+1), at(time.Duration(round)*time.Second)); err != nil {
					errs <- fmt.Errorf("beater %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := h.Beats(ctx)
	if err != nil || len(got) != 1 || got[0].Node != 9 || got[0].Epoch != beaters {
		t.Fatalf("Beats = %v, %v; want node 9 at epoch %d", got, err, beaters)
	}
}

func testBeatsShared(t *testing.T, open HeartbeatsOpener) {
	ctx := testContext(t)
	h, another := open(t)
	if another == nil {
		t.Skip("the adapter cannot open two handles on one store")
	}
	other := another()
	mustBeat(ctx, t, h, 4, 2, at(0))
	mustBeat(ctx, t, other, 4, 1, at(time.Second))
	mustBeat(ctx, t, other, 5, 1, at(time.Second))
	want := []ports.Heartbeat{beat(4, 2, 0), beat(5, 1, time.Second)}
	expectBeats(ctx, t, h, want...)
	expectBeats(ctx, t, other, want...)
}
