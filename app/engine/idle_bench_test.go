package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/picomq/pico/adapters/memstore"
)

// BenchmarkIdleMaintenanceRound is one round of the background work an
// idle node does each tick (upload, then compaction) with n streams open
// and nothing appended since the last round: its cost must not grow with
// n.
func BenchmarkIdleMaintenanceRound(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("open=%d", n), func(b *testing.B) {
			p := startProcessTB(b, memstore.New())
			ctx := context.Background()
			for i := range n {
				id := p.createB(b, i)
				if i%10 == 0 {
					p.appendFirst(b, id, "x")
				}
			}
			if _, err := p.engine.Upload(ctx); err != nil {
				b.Fatal(err)
			}
			p.engine.compactAll(ctx)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.engine.Upload(ctx); err != nil {
					b.Fatal(err)
				}
				p.engine.compactAll(ctx)
			}
		})
	}
}

// TestIdleStreamsLeaveNoBackgroundWork: once uploaded and checked for
// compaction, idle streams are in no round's set; an append puts exactly
// its stream back.
func TestIdleStreamsLeaveNoBackgroundWork(t *testing.T) {
	p := startProcessTB(t, memstore.New())
	ctx := context.Background()
	var ids []uint64
	for i := range 50 {
		ids = append(ids, p.createB(t, i))
		if i%5 == 0 {
			p.appendFirst(t, ids[i], "x")
		}
	}
	if _, err := p.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	p.engine.compactAll(ctx)
	if up, compact := len(p.engine.toUpload.take()), len(p.engine.toCompact.take()); up != 0 || compact != 0 {
		t.Fatalf("idle streams left %d for upload and %d for compaction", up, compact)
	}
	p.appendFirst(t, ids[7], "y")
	if got := p.engine.toUpload.take(); len(got) != 1 || got[0] != ids[7] {
		t.Fatalf("after one append the upload round visits %v, want [%d]", got, ids[7])
	}
}
