package conformance

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// testContext bounds every call of a subtest, so a hung adapter fails
// instead of stalling the whole run.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func payloadFor(index uint64) []byte {
	return fmt.Appendf(nil, "row-%d", index)
}

// appendRange appends payloadFor(i) for i in [from, to].
func appendRange(ctx context.Context, t *testing.T, log ports.MetaLog, from, to uint64) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := log.Append(ctx, i, payloadFor(i)); err != nil {
			t.Fatalf("Append(%d): %v", i, err)
		}
	}
}

func mustRead(ctx context.Context, t *testing.T, log ports.MetaLog, after uint64, limit int) []ports.Row {
	t.Helper()
	rows, err := log.Read(ctx, after, limit)
	if err != nil {
		t.Fatalf("Read(%d, %d): %v", after, limit, err)
	}
	return rows
}

// expectRange checks that rows are exactly from..to with payloadFor payloads.
func expectRange(t *testing.T, rows []ports.Row, from, to uint64) {
	t.Helper()
	want := int(to - from + 1)
	if from > to {
		want = 0
	}
	if len(rows) != want {
		t.Fatalf("got %d rows %v, want indexes %d..%d", len(rows), indexes(rows), from, to)
	}
	for i, r := range rows {
		idx := from + uint64(i)
		if r.Index != idx || !bytes.Equal(r.Payload, payloadFor(idx)) {
			t.Fatalf("row %d = {%d %q}, want {%d %q}", i, r.Index, r.Payload, idx, payloadFor(idx))
		}
	}
}

func indexes(rows []ports.Row) []uint64 {
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = r.Index
	}
	return out
}

func mustLastIndex(ctx context.Context, t *testing.T, log ports.MetaLog, want uint64) {
	t.Helper()
	got, err := log.LastIndex(ctx)
	if err != nil {
		t.Fatalf("LastIndex: %v", err)
	}
	if got != want {
		t.Fatalf("LastIndex = %d, want %d", got, want)
	}
}

// pseudoRandom returns n deterministic bytes that are not a simple pattern.
func pseudoRandom(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
