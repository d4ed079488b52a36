package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// readersSettle bounds how long the readers may take, after the last
// acknowledgement, to read every acknowledged record (a variable for the
// tests).
var readersSettle = 30 * time.Second

// benchReaders are the live readers of a run: each follows one stream
// from its start with long-polls and checks every record's chain.
type benchReaders struct {
	b      *bench
	from   time.Time // records sent before it are the warmup's: no latency
	cancel context.CancelFunc
	wg     sync.WaitGroup
	all    []*benchReader

	mu       sync.Mutex
	latency  *hdrhistogram.Histogram // µs from an append's send to a reader's receipt
	verified int64
	firstErr error
}

type benchReader struct {
	stream int
	mu     sync.Mutex
	check  *chainCheck
}

// startReaders starts --readers readers a stream.
func (b *bench) startReaders(ctx context.Context, from time.Time) *benchReaders {
	ctx, cancel := context.WithCancel(ctx)
	rs := &benchReaders{b: b, from: from, cancel: cancel, latency: newLatencyHistogram()}
	for s := range b.names {
		for range b.o.readers {
			r := &benchReader{stream: s, check: newChainCheck(b.o.recordSize, b.quoted)}
			rs.all = append(rs.all, r)
			rs.wg.Go(func() { rs.follow(ctx, r) })
		}
	}
	return rs
}

// follow reads r's stream until ctx ends or a record fails its check.
func (rs *benchReaders) follow(ctx context.Context, r *benchReader) {
	client := rs.b.clients[r.stream%len(rs.b.clients)]
	name := rs.b.names[r.stream]
	var pos string
	var rest []byte // an unframed page's bytes short of a record
	for ctx.Err() == nil {
		p, err := client.read(ctx, name, pos, 0, true)
		if err != nil {
			if ctx.Err() == nil {
				rs.fail(streamError(name, err))
			}
			return
		}
		pos = p.next
		for _, rec := range p.records {
			if !p.framed {
				rest = append(rest, rec.body...)
				continue
			}
			if !rs.verify(r, rec.body) {
				return
			}
		}
		for ; len(rest) >= rs.b.o.recordSize; rest = rest[rs.b.o.recordSize:] {
			if !rs.verify(r, rest[:rs.b.o.recordSize]) {
				return
			}
		}
	}
}

// verify checks one record, reporting false after a failure.
func (rs *benchReaders) verify(r *benchReader, rec []byte) bool {
	r.mu.Lock()
	_, _, sent, err := r.check.check(rec)
	r.mu.Unlock()
	if err != nil {
		rs.fail(fmt.Errorf("stream %s: %w", rs.b.names[r.stream], err))
		return false
	}
	took := min(time.Since(sent).Microseconds(), rs.latency.HighestTrackableValue())
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.verified++
	if !sent.Before(rs.from) {
		_ = rs.latency.RecordValue(max(took, 1))
	}
	return true
}

func (rs *benchReaders) fail(err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.firstErr == nil {
		rs.firstErr = err
	}
}

// settle waits until every reader has read every record acknowledged on
// its stream (acked[stream][writer]), or a reader failed, or the settle
// time ran out, then stops the readers and returns the first failure.
func (rs *benchReaders) settle(acked [][]uint64) error {
	defer rs.wg.Wait()
	defer rs.cancel()
	deadline := time.Now().Add(readersSettle)
	for {
		behind := rs.behind(acked)
		rs.mu.Lock()
		err := rs.firstErr
		rs.mu.Unlock()
		switch {
		case err != nil:
			return err
		case behind == nil:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("after %v: %w", readersSettle, behind)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// behind is the first reader's shortfall, nil if none is behind.
func (rs *benchReaders) behind(acked [][]uint64) error {
	for _, r := range rs.all {
		r.mu.Lock()
		err := r.check.missing(acked[r.stream])
		r.mu.Unlock()
		if err != nil {
			return fmt.Errorf("stream %s: %w", rs.b.names[r.stream], err)
		}
	}
	return nil
}

// summary adds the readers' figures to s.
func (rs *benchReaders) summary(s *benchSummary) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	s.Verified = rs.verified
	s.EndToEndMs = quantilesMs(rs.latency)
}
