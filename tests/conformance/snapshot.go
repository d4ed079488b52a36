package conformance

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/picomq/pico/ports"
)

func mustSnapshot(ctx context.Context, t *testing.T, log ports.MetaLog, index uint64, payload []byte) {
	t.Helper()
	got, err := log.Snapshot(ctx)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if got.Index != index || !bytes.Equal(got.Payload, payload) {
		t.Fatalf("Snapshot = {%d, %d bytes}, want {%d, %d bytes} with equal content",
			got.Index, len(got.Payload), index, len(payload))
	}
}

func mustPutSnapshot(ctx context.Context, t *testing.T, log ports.MetaLog, index uint64, payload []byte) {
	t.Helper()
	if err := log.PutSnapshot(ctx, ports.Snapshot{Index: index, Payload: payload}); err != nil {
		t.Fatalf("PutSnapshot(%d): %v", index, err)
	}
}

func testSnapshot(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	if _, err := log.Snapshot(ctx); !errors.Is(err, ports.ErrNoSnapshot) {
		t.Fatalf("Snapshot on a new log = %v, want ErrNoSnapshot", err)
	}
	mustPutSnapshot(ctx, t, log, 3, []byte("state-3"))
	mustSnapshot(ctx, t, log, 3, []byte("state-3"))
	// Lower and equal indexes are ignored without error.
	mustPutSnapshot(ctx, t, log, 2, []byte("state-2"))
	mustPutSnapshot(ctx, t, log, 3, []byte("state-3-again"))
	mustSnapshot(ctx, t, log, 3, []byte("state-3"))
	mustPutSnapshot(ctx, t, log, 7, nil)
	mustSnapshot(ctx, t, log, 7, nil)
	big := pseudoRandom(1 << 20)
	mustPutSnapshot(ctx, t, log, 8, big)
	mustSnapshot(ctx, t, log, 8, big)
}

func testTruncate(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	appendRange(ctx, t, log, 1, 10)
	mustPutSnapshot(ctx, t, log, 5, []byte("state-5"))
	for _, through := range []uint64{5, 5, 3} { // idempotent, never backwards
		if err := log.Truncate(ctx, through); err != nil {
			t.Fatalf("Truncate(%d): %v", through, err)
		}
		for _, after := range []uint64{0, 4} {
			if _, err := log.Read(ctx, after, 10); !errors.Is(err, ports.ErrTruncated) {
				t.Fatalf("after Truncate(%d): Read(%d) = %v, want ErrTruncated", through, after, err)
			}
		}
		expectRange(t, mustRead(ctx, t, log, 5, 100), 6, 10)
		mustLastIndex(ctx, t, log, 10)
	}
	// A truncated index was written once, so it stays taken.
	if err := log.Append(ctx, 5, []byte("again")); !errors.Is(err, ports.ErrConflict) {
		t.Fatalf("Append(5) after Truncate(5) = %v, want ErrConflict", err)
	}
	appendRange(ctx, t, log, 11, 11)
	expectRange(t, mustRead(ctx, t, log, 5, 100), 6, 11)
}

func testTruncateAll(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	appendRange(ctx, t, log, 1, 10)
	mustPutSnapshot(ctx, t, log, 10, []byte("state-10"))
	if err := log.Truncate(ctx, 10); err != nil {
		t.Fatalf("Truncate(10): %v", err)
	}
	if _, err := log.Read(ctx, 9, 10); !errors.Is(err, ports.ErrTruncated) {
		t.Fatalf("Read(9) = %v, want ErrTruncated", err)
	}
	if rows := mustRead(ctx, t, log, 10, 10); len(rows) != 0 {
		t.Fatalf("Read(10) = %v, want no rows", indexes(rows))
	}
	mustLastIndex(ctx, t, log, 10)
	appendRange(ctx, t, log, 11, 12)
	expectRange(t, mustRead(ctx, t, log, 10, 10), 11, 12)
}

func testTruncateClamp(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	appendRange(ctx, t, log, 1, 3)
	mustPutSnapshot(ctx, t, log, 3, []byte("state-3"))
	if err := log.Truncate(ctx, 1000); err != nil {
		t.Fatalf("Truncate(1000): %v", err)
	}
	mustLastIndex(ctx, t, log, 3)
	appendRange(ctx, t, log, 4, 5)
	// Had the point moved past 3, this would be ErrTruncated.
	expectRange(t, mustRead(ctx, t, log, 3, 10), 4, 5)
}
