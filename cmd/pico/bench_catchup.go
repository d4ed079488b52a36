package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// benchCatchUp are the catch-up readers of a run (--catchup-readers): each
// goes through the run's streams in turn, reading each from its start to
// its tail as fast as it can, as a reader replaying history does, and
// counts what it reads after the warmup.
type benchCatchUp struct {
	from, until time.Time
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	bytes       atomic.Int64

	mu       sync.Mutex
	firstErr error
}

// startCatchUp starts --catchup-readers readers.
func (b *bench) startCatchUp(ctx context.Context, from time.Time) *benchCatchUp {
	ctx, cancel := context.WithCancel(ctx)
	cu := &benchCatchUp{from: from, cancel: cancel}
	for r := range b.o.catchUpReaders {
		cu.wg.Go(func() { cu.replay(ctx, b, r) })
	}
	return cu
}

// replay is reader r: it starts at stream r and keeps to connection pool r.
func (cu *benchCatchUp) replay(ctx context.Context, b *bench, r int) {
	client := b.clients[r%len(b.clients)]
	for s := r; ctx.Err() == nil; s++ {
		name := b.names[s%len(b.names)]
		for pos := ""; ctx.Err() == nil; {
			p, err := client.read(ctx, name, pos, 0, false)
			if err != nil {
				if ctx.Err() == nil {
					cu.fail(streamError(name, err))
				}
				return
			}
			if time.Now().After(cu.from) {
				n := 0
				for _, rec := range p.records {
					n += len(rec.body)
				}
				cu.bytes.Add(int64(n))
			}
			if p.upToDate || p.next == pos {
				break
			}
			pos = p.next
		}
	}
}

func (cu *benchCatchUp) fail(err error) {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	if cu.firstErr == nil {
		cu.firstErr = err
	}
}

// stop ends the readers and returns the first failure.
func (cu *benchCatchUp) stop() error {
	cu.cancel()
	cu.wg.Wait()
	cu.until = time.Now()
	cu.mu.Lock()
	defer cu.mu.Unlock()
	return cu.firstErr
}

// summary adds the readers' figures to s.
func (cu *benchCatchUp) summary(s *benchSummary) {
	if secs := cu.until.Sub(cu.from).Seconds(); secs > 0 {
		s.CatchUpMiBPerSec = float64(cu.bytes.Load()) / (1 << 20) / secs
	}
}
