package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
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

// BenchmarkIdleStreamFootprint reports the engine heap an open, idle
// stream holds (its records uploaded), beside what the metadata view
// holds for it, and what is left of it once released while idle.
func BenchmarkIdleStreamFootprint(b *testing.B) {
	const n = 20_000
	for b.Loop() {
		p := startProcessTB(b, memstore.New())
		clock := &testClock{now: time.Now()}
		p.engine.cfg.Now, p.engine.cfg.ReleaseIdleAfter = clock.Now, time.Minute
		ctx := context.Background()
		ids := make([]uint64, n)
		for i := range n {
			r, err := p.plane.ProposeOne(ctx, &domain.CreateStream{By: p.by, Name: fmt.Sprintf("/f/%d", i), Open: true})
			if err != nil || r.Code != domain.ResultOK {
				b.Fatalf("create: %v %v", r, err)
			}
			ids[i] = r.Value
		}
		viewOnly := heapInUse()
		for i, id := range ids {
			p.mustOpen(b, id)
			if i%10 == 0 {
				p.appendFirst(b, id, "x")
			}
		}
		if _, err := p.engine.Upload(ctx); err != nil {
			b.Fatal(err)
		}
		p.engine.compactAll(ctx)
		open := heapInUse()
		if got := p.engine.LocalCount(); got != n {
			b.Fatalf("%d streams open, want %d", got, n)
		}
		clock.advance(2 * time.Minute)
		for p.engine.releaseIdle() > 0 {
		}
		if got := p.engine.LocalCount(); got != 0 {
			b.Fatalf("%d streams still in memory, want 0", got)
		}
		released := heapInUse()
		b.ReportMetric(float64(viewOnly)/n, "view-B/stream")
		b.ReportMetric(float64(open-viewOnly)/n, "engine-B/stream")
		b.ReportMetric((float64(released)-float64(viewOnly))/n, "released-B/stream")
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkReopenAfterRestart opens, from a restarted process, streams
// its crashed predecessor wrote (each with one committed record and one
// only in its WAL), from 1 and from 16 goroutines: opens of different
// streams must run side by side.
func BenchmarkReopenAfterRestart(b *testing.B) {
	const n = 2_000
	for _, workers := range []int{1, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				log, store := memlog.New(), memstore.New()
				before := startProcess(b, log, store, 1, 1)
				ids := make([]uint64, n)
				for i := range ids {
					ids[i] = before.createB(b, i)
					before.appendFirst(b, ids[i], "committed")
				}
				if _, err := before.engine.Upload(context.Background()); err != nil {
					b.Fatal(err)
				}
				for _, id := range ids {
					if _, err := before.engine.byID(id).appendRecords(context.Background(), records("in the WAL"), nil); err != nil {
						b.Fatal(err)
					}
				}
				after := takeOver(b, log, store, 1, 2, before)
				b.StartTimer()
				openAll(b, after, ids, workers)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/open")
		})
	}
}

func openAll(b *testing.B, p *process, ids []uint64, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(ids)); i = next.Add(1) - 1 {
				if _, err := p.engine.Open(context.Background(), ids[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
