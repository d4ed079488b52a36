// Package conformance is the behaviour every adapter of ports.MetaLog,
// ports.LogNotifier and ports.Lease must show. An adapter's test calls
// MetaLog and Lease with a function that opens a fresh store.
package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/picomq/pico/ports"
)

// MetaLogOpener opens a fresh, empty log for one subtest and registers its
// cleanup with t.Cleanup; the suite may have closed the log itself by then, so
// that cleanup must ignore Close's result.
//
// second, when not nil, opens another handle onto the same store, as a second
// process would (its own connections); the opener cleans those up too. It is
// nil when the adapter cannot share a store between handles, and the
// multi-handle subtests then skip.
type MetaLogOpener func(t *testing.T) (log ports.MetaLog, second func() ports.MetaLog)

// MetaLog runs the metadata log suite, and the notification subtests when the
// log implements ports.LogNotifier.
func MetaLog(t *testing.T, open MetaLogOpener) {
	t.Run("AppendReadOrderAndLimit", func(t *testing.T) { testAppendRead(t, open) })
	t.Run("ReadAtTailIsEmpty", func(t *testing.T) { testReadAtTail(t, open) })
	t.Run("PayloadsRoundTrip", func(t *testing.T) { testPayloads(t, open) })
	t.Run("SlicesAreNotShared", func(t *testing.T) { testSlicesNotShared(t, open) })
	t.Run("DuplicateIndexConflicts", func(t *testing.T) { testConflict(t, open) })
	t.Run("RacingAppendsOneHandle", func(t *testing.T) { testRace(t, open, false) })
	t.Run("RacingAppendsTwoHandles", func(t *testing.T) { testRace(t, open, true) })
	t.Run("LastIndex", func(t *testing.T) { testLastIndex(t, open) })
	t.Run("Snapshot", func(t *testing.T) { testSnapshot(t, open) })
	t.Run("Truncate", func(t *testing.T) { testTruncate(t, open) })
	t.Run("TruncateEverything", func(t *testing.T) { testTruncateAll(t, open) })
	t.Run("TruncateClampsToLastIndex", func(t *testing.T) { testTruncateClamp(t, open) })
	t.Run("NotifyOnAppend", func(t *testing.T) { testNotify(t, open) })
	t.Run("NotifyEndsOnClose", func(t *testing.T) { testNotifyClose(t, open) })
	t.Run("CallsFailAfterClose", func(t *testing.T) { testClosed(t, open) })
}

func testAppendRead(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	appendRange(ctx, t, log, 1, 10)
	expectRange(t, mustRead(ctx, t, log, 0, 100), 1, 10)
	expectRange(t, mustRead(ctx, t, log, 0, 3), 1, 3)
	expectRange(t, mustRead(ctx, t, log, 3, 4), 4, 7)
	expectRange(t, mustRead(ctx, t, log, 8, 10), 9, 10)
	expectRange(t, mustRead(ctx, t, log, 9, 1), 10, 10)
}

func testReadAtTail(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	if rows := mustRead(ctx, t, log, 0, 10); len(rows) != 0 {
		t.Fatalf("empty log: Read(0) = %v, want no rows", indexes(rows))
	}
	appendRange(ctx, t, log, 1, 3)
	for _, after := range []uint64{3, 4, 1000} {
		if rows := mustRead(ctx, t, log, after, 10); len(rows) != 0 {
			t.Fatalf("Read(%d) = %v, want no rows", after, indexes(rows))
		}
	}
}

func testPayloads(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	payloads := [][]byte{{}, nil, all, pseudoRandom(1 << 20), []byte("'\"\\;--")}
	for i, p := range payloads {
		if err := log.Append(ctx, uint64(i+1), p); err != nil {
			t.Fatalf("Append(%d, %d bytes): %v", i+1, len(p), err)
		}
	}
	rows := mustRead(ctx, t, log, 0, 100)
	if len(rows) != len(payloads) {
		t.Fatalf("got %d rows, want %d", len(rows), len(payloads))
	}
	for i, r := range rows {
		if r.Index != uint64(i+1) || !bytes.Equal(r.Payload, payloads[i]) {
			t.Fatalf("row %d: index %d, %d bytes; want index %d, %d bytes, equal content",
				i, r.Index, len(r.Payload), i+1, len(payloads[i]))
		}
	}
}

func testSlicesNotShared(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	given := []byte("original")
	if err := log.Append(ctx, 1, given); err != nil {
		t.Fatalf("Append: %v", err)
	}
	copy(given, "CHANGED!")
	got := mustRead(ctx, t, log, 0, 1)
	if len(got) != 1 || string(got[0].Payload) != "original" {
		t.Fatalf("after changing the appended slice, Read = %v, want \"original\"", got)
	}
	copy(got[0].Payload, "CHANGED!")
	if again := mustRead(ctx, t, log, 0, 1); string(again[0].Payload) != "original" {
		t.Fatalf("after changing a returned slice, Read = %q, want \"original\"", again[0].Payload)
	}
}

func testConflict(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	appendRange(ctx, t, log, 1, 1)
	for _, p := range [][]byte{payloadFor(1), []byte("other")} {
		if err := log.Append(ctx, 1, p); !errors.Is(err, ports.ErrConflict) {
			t.Fatalf("second Append(1, %q) = %v, want ErrConflict", p, err)
		}
	}
	appendRange(ctx, t, log, 2, 2)
	expectRange(t, mustRead(ctx, t, log, 0, 10), 1, 2)
}

// testRace has 32 writers append at the same index, for several indexes; with
// twoHandles, writers alternate between two handles on one store.
func testRace(t *testing.T, open MetaLogOpener, twoHandles bool) {
	ctx := testContext(t)
	first, second := open(t)
	handles := []ports.MetaLog{first}
	if twoHandles {
		if second == nil {
			t.Skip("the adapter cannot open two handles on one store")
		}
		handles = append(handles, second())
	}
	const writers = 32
	for index := uint64(1); index <= 5; index++ {
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				h := handles[w%len(handles)]
				errs[w] = h.Append(ctx, index, fmt.Appendf(nil, "writer-%d", w))
			})
		}
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("index %d: writers %d and %d both won", index, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, ports.ErrConflict):
				t.Fatalf("index %d: writer %d: %v, want nil or ErrConflict", index, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("index %d: no writer won", index)
		}
		for _, h := range handles {
			rows := mustRead(ctx, t, h, index-1, 10)
			if want := fmt.Sprintf("writer-%d", winner); len(rows) != 1 || string(rows[0].Payload) != want {
				t.Fatalf("index %d: Read = %v, want one row %q", index, rows, want)
			}
		}
	}
	for _, h := range handles {
		mustLastIndex(ctx, t, h, 5)
	}
}

func testLastIndex(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	mustLastIndex(ctx, t, log, 0)
	appendRange(ctx, t, log, 1, 3)
	mustLastIndex(ctx, t, log, 3)
	if err := log.PutSnapshot(ctx, ports.Snapshot{Index: 10, Payload: []byte("s")}); err != nil {
		t.Fatalf("PutSnapshot: %v", err)
	}
	mustLastIndex(ctx, t, log, 10)
	appendRange(ctx, t, log, 11, 11)
	mustLastIndex(ctx, t, log, 11)
}
