package main

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/picomq/pico/adapters/picoclient"
)

// producerCloseTimeout bounds the flush at the end of a --producer run.
const producerCloseTimeout = 30 * time.Second

// runProducers is run with one Producer a stream: a feeder appends records
// for the duration and a collector counts each acknowledgement.
func (b *bench) runProducers(ctx context.Context, stderr io.Writer) (benchResult, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	opts := picoclient.ProducerOptions{MaxBatchRecords: b.o.batch, MaxInFlight: b.o.window,
		MaxBatchBytes: maxBenchRequestBytes}
	b.o.batch = 1 // an acknowledgement is one record
	from, deadline := b.window()
	tally := newBenchTally(stop, from, b.o.rate)
	var wg sync.WaitGroup
	for i, name := range b.names {
		p := b.clients[i%len(b.clients)].(picoStreams).c.NewProducer(name, opts)
		pending := make(chan sentRecord, 1<<14)
		wg.Go(func() {
			defer close(pending)
			for {
				t0, ok := tally.next(ctx, deadline)
				if !ok {
					break
				}
				ack, err := p.Append(ctx, picoclient.Record{Body: b.records[0]})
				if err != nil {
					tally.fail(ctx, name, err)
					return
				}
				pending <- sentRecord{ack, t0}
			}
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), producerCloseTimeout)
			defer cancel()
			if err := p.Close(closeCtx); err != nil {
				tally.fail(ctx, name, err)
			}
		})
		wg.Go(func() {
			for s := range pending {
				if err := s.ack.Wait(ctx); err != nil {
					tally.fail(ctx, name, err)
					continue
				}
				tally.acked(s.at)
			}
		})
	}
	return b.finish(ctx, deadline, &wg, tally, stderr)
}

// sentRecord is a record given to a producer at at.
type sentRecord struct {
	ack *picoclient.Ack
	at  time.Time
}
