package picoclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// ProducerOptions configure a Producer. The zero value is usable.
type ProducerOptions struct {
	// ID names the producer to the server; empty picks a random one. Keep
	// it stable across restarts of one logical writer, so that the new
	// process fences the old one.
	ID string
	// Epoch is the producer's epoch; 0 means the Unix time in
	// microseconds when the producer is made, so that a restarted writer
	// with the same ID starts above its predecessor. An epoch set by hand
	// must grow with every restart: a reused one fails with ErrEpochInUse.
	Epoch uint64
	// ClaimOnFence takes over when another producer with the ID fences
	// this one: the epoch becomes one above the server's and the
	// unacknowledged batches are sent again, after a backoff. Two live
	// writers with the ID then fence each other in turn, and a batch whose
	// answer was lost just before the fence may be written twice. Off, the
	// producer fails with ErrFenced.
	ClaimOnFence bool
	// Linger is how long a batch waits for more records; 0 means 5 ms,
	// and a negative value sends each batch as soon as a slot is free.
	Linger time.Duration
	// MaxBatchRecords and MaxBatchBytes bound one request; 0 means 500
	// records and 1 MiB.
	MaxBatchRecords, MaxBatchBytes int
	// MaxInFlight bounds the batches sent and not yet answered; 0 means 4.
	MaxInFlight int
	// MaxBufferedBytes bounds the records appended and not yet
	// acknowledged; Append waits for room beyond it. 0 means 32 MiB.
	MaxBufferedBytes int
	// RetryFor bounds how long one batch is retried on failures that may
	// pass (a node restarting or failing over, a 503, a fence it claims
	// over); 0 retries until Close's context ends. A batch given up on
	// fails with ErrUnknownOutcome: it may have been written.
	RetryFor time.Duration
	// MaxBackoff caps the wait between retries; 0 means 2 s.
	MaxBackoff time.Duration
}

func (o ProducerOptions) withDefaults() ProducerOptions {
	if o.ID == "" {
		o.ID = randomID()
	}
	if o.Epoch == 0 {
		o.Epoch = uint64(time.Now().UnixMicro())
	}
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&o.MaxBatchRecords, 500)
	set(&o.MaxBatchBytes, 1<<20)
	set(&o.MaxInFlight, 4)
	set(&o.MaxBufferedBytes, 32<<20)
	if o.Linger == 0 {
		o.Linger = 5 * time.Millisecond
	}
	o.MaxBufferedBytes = max(o.MaxBufferedBytes, o.MaxBatchBytes)
	return o
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails
	return "go-" + hex.EncodeToString(b)
}

// ErrProducerClosed is returned by Append after Close.
var ErrProducerClosed = errors.New("producer closed")

// ErrRecordTooLarge is returned by Append for a record that exceeds
// MaxBatchBytes on its own.
var ErrRecordTooLarge = errors.New("record larger than the producer's MaxBatchBytes")

// ErrEpochInUse fails a producer whose first send of a stamp was answered
// as a duplicate: another producer (or an earlier run) used its id and
// epoch, and its records would be dropped as repeats.
var ErrEpochInUse = errors.New("producer id and epoch already used")

// ErrUnknownOutcome fails a batch given up on after failures that may
// have passed unseen (RetryFor, or Close's context, ended): it may or may
// not have been written.
var ErrUnknownOutcome = errors.New("outcome unknown: the records may have been written")

// Producer appends records to one stream in batches, exactly once: each
// batch carries an idempotent stamp, so a batch sent again after a lost
// answer, a node restart or a failover is written once, and batches land
// in the order records were appended. It is safe for concurrent use.
//
// A refusal (the stream is closed or missing, the producer is fenced, the
// credential is refused) fails the producer: the records not yet
// acknowledged fail, and so do later Appends, with that error. A failed
// record was not written, except one that fails with ErrUnknownOutcome.
type Producer struct {
	c      *Client
	name   string
	o      ProducerOptions
	budget *semaphore.Weighted // MaxBufferedBytes
	ctx    context.Context     // ends when Close gives up
	cancel context.CancelFunc

	mu       sync.Mutex
	open     *batch   // taking records; nil until the first one
	queued   []*batch // sealed, waiting for a slot
	inFlight []*batch // sent, in seq order, not yet resolved
	epoch    uint64   // the epoch batches are stamped with
	base     int64    // the index of the epoch's seq 0
	index    int64    // the next sealed batch's index
	err      error    // set once: the producer's failure
	failedAt int64    // the index of the batch that failed it
	claimed  uint64   // the last epoch ClaimOnFence took
	closed   bool
}

// NewProducer returns a producer for stream name. It sends nothing until
// the first Append.
func (c *Client) NewProducer(name string, opts ProducerOptions) *Producer {
	o := opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Producer{c: c, name: name, o: o, budget: semaphore.NewWeighted(int64(o.MaxBufferedBytes)),
		ctx: ctx, cancel: cancel, epoch: o.Epoch}
}

// ID is the producer's id.
func (p *Producer) ID() string { return p.o.ID }

// Epoch is the epoch the producer stamps batches with now.
func (p *Producer) Epoch() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}

// Append adds rec to the current batch and returns its acknowledgement,
// which resolves once the record is durable or has failed. It waits while
// MaxBufferedBytes are pending, for at most ctx. Only rec's Key, Headers
// and Body are sent.
func (p *Producer) Append(ctx context.Context, rec Record) (*Ack, error) {
	size := recordBytes(rec)
	if size > p.o.MaxBatchBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrRecordTooLarge, size, p.o.MaxBatchBytes)
	}
	if err := p.budget.Acquire(ctx, int64(size)); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refusal(); err != nil {
		p.budget.Release(int64(size))
		return nil, err
	}
	if p.open != nil && p.open.bytes+size > p.o.MaxBatchBytes {
		p.seal()
	}
	if p.open == nil {
		b := &batch{done: make(chan struct{})}
		b.linger = time.AfterFunc(max(p.o.Linger, 0), func() { p.sealIfOpen(b) })
		p.open = b
	}
	b := p.open
	ack := &Ack{b: b, i: len(b.records)}
	b.records, b.bytes = append(b.records, Record{Key: rec.Key, Headers: rec.Headers, Body: rec.Body}), b.bytes+size
	if len(b.records) >= p.o.MaxBatchRecords {
		p.seal()
	}
	return ack, nil
}

// refusal is why Append refuses now, if it does.
func (p *Producer) refusal() error {
	switch {
	case p.err != nil:
		return p.err
	case p.closed:
		return ErrProducerClosed
	}
	return nil
}

// Flush sends what is batched and waits until every record appended before
// it is acknowledged. It returns the producer's failure, if any.
func (p *Producer) Flush(ctx context.Context) error {
	p.mu.Lock()
	p.seal()
	pending := append(append([]*batch(nil), p.inFlight...), p.queued...)
	p.mu.Unlock()
	for _, b := range pending {
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close flushes and stops the producer. If ctx ends first, the retries
// still running are abandoned and their records fail; whether such a
// record was written is unknown.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.Flush(ctx)
	if err != nil && ctx.Err() != nil {
		p.abandon(fmt.Errorf("%w: producer closed before its records were acknowledged: %w", ErrUnknownOutcome, ctx.Err()))
	}
	p.cancel()
	return err
}
