package wal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Errors of the WAL.
var (
	// ErrFenced: another process fenced this WAL (a newer owner took over).
	// Nothing submitted after the fence is acknowledged, ever.
	ErrFenced = errors.New("wal: fenced by a newer owner")
	// ErrClosed: the WAL was closed.
	ErrClosed = errors.New("wal: closed")
	// ErrBacklog: SubmitBy found no room for the frame by its deadline:
	// MaxBufferedBytes are not yet stored (the store is failing or slow).
	// Nothing was submitted.
	ErrBacklog = errors.New("wal: the appends not yet stored fill the buffer")
	// ErrFailed: the object store refused a bulk past RetryFor (when one
	// is set); the WAL acknowledges nothing more (the process must restart).
	ErrFailed = errors.New("wal: the object store failed for longer than the retry window")
)

// Config tunes a WAL. Zero values take the defaults.
type Config struct {
	Store  ports.ObjectStore
	Node   domain.NodeID
	Epoch  uint64 // the node epoch: each process writes its own key space
	Logger *slog.Logger
	// MaxBulkBytes seals a bulk while uploads are in flight (4 MiB).
	MaxBulkBytes int
	// MaxInFlight bounds concurrent uploads (8).
	MaxInFlight int
	// MaxBufferedBytes bounds bytes submitted but not yet acknowledged;
	// Submit waits beyond it (64 MiB).
	MaxBufferedBytes int
	// RetryFor is how long one bulk is retried before the WAL fails (0:
	// until it is stored, or the WAL is fenced or closed). Without a bound
	// a store that comes back finds the WAL working: appends wait for it
	// (their callers bound the wait) and nothing is lost or reordered.
	RetryFor time.Duration
	// CloseWithin bounds how long Close waits for what is buffered to be
	// stored (10 s); past it, the rest fails with ErrClosed. It was never
	// acknowledged.
	CloseWithin time.Duration
	// MaxLinger caps how long the next bulk waits for the appenders an
	// upload just acknowledged to come back (20 ms; negative: never wait).
	// See linger.
	MaxLinger time.Duration
	// Pipeline is how many uploads may overlap on PUT latency alone (4):
	// while uploads are in flight, the draft leaves once its first frame
	// has waited the recent PUT latency divided by Pipeline, instead of
	// waiting for an upload to complete. 1 turns it off. See pacer.
	Pipeline int
	// PipelineGap is the shortest such wait (5 ms): on a store whose PUTs
	// take less, a draft leaves when an upload completes, as with
	// Pipeline 1.
	PipelineGap time.Duration
	// MaxPutRate bounds the PUTs per second of bulks (0: no bound): the
	// cost dial. A draft that may leave waits for the next PUT the bound
	// allows, and what arrives meanwhile shares it, so latency grows as
	// the bound falls and PUTs stay within it. Close is not held by it.
	MaxPutRate float64
	// PutSeconds and PutBytes, if set, observe each bulk stored: the
	// time its PUT took, retries included, and its size.
	PutSeconds, PutBytes ports.Observer
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxBulkBytes <= 0 {
		c.MaxBulkBytes = 4 << 20
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 8
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = 64 << 20
	}
	if c.CloseWithin <= 0 {
		c.CloseWithin = 10 * time.Second
	}
	if c.MaxLinger == 0 {
		c.MaxLinger = 20 * time.Millisecond
	}
	if c.Pipeline <= 0 {
		c.Pipeline = 4
	}
	if c.PipelineGap <= 0 {
		c.PipelineGap = 5 * time.Millisecond
	}
}

// WAL is one node process's write-ahead log in the object store. Frames are
// grouped into bulks; each bulk is one PutIfAbsent at the next sequence
// number of the process's key space.
//
// Group commit is adaptive: with no upload in flight a frame is sealed and
// uploaded at once (a lone append costs one PUT, with no timer); while
// uploads are in flight, arrivals accumulate and leave as one bulk when an
// upload completes, or earlier once MaxBulkBytes is reached or, on a slow
// store, once they have waited part of a PUT's time (see pacer). When an
// upload completes, the next bulk may wait a moment for the appenders it
// acknowledged to come back (see linger).
//
// Durability point: a frame's done callback gets nil only when its bulk and
// every earlier bulk are stored. Callbacks run in bulk order, under the
// WAL's lock: they must be quick and must not call the WAL.
type WAL struct {
	cfg    Config
	prefix string

	mu       sync.Mutex
	space    *sync.Cond // buffered bytes dropped, or the WAL failed or closed
	open     draft      // frames for the next bulk
	nextSeq  uint64
	inflight int
	buffered int
	sealed   map[uint64]*bulk // sealed and not yet acknowledged
	acked    uint64           // every bulk <= acked is stored
	retained []*bulk          // acknowledged bulks not yet deleted, in order
	retiring sync.Mutex       // one Retire at a time: deletes go in order
	failed   error
	uploads  sync.WaitGroup // bulks sealed and not yet through upload

	// Sealed bulks go to long-lived uploaders, started as needed up to the
	// most ever in flight, instead of to a new goroutine each: a PUT runs
	// deep through the object store's client, and a fresh goroutine would
	// grow and copy its stack several times on every one.
	queue     chan *bulk
	uploaders int

	spare    [][]byte // buffers of stored bulks, for the next drafts
	linger   linger
	pacer    pacer
	lastSeal time.Time // when the last bulk was sealed (kept with MaxPutRate)
	closing  bool

	puts, submissions, putNanos atomic.Int64
	// failingSince is when the oldest PUT now being retried first failed
	// (unix nanoseconds, 0: none is failing).
	failingSince atomic.Int64
	// abandon ends the uploads still being retried once Close gives up.
	abandon     context.Context
	stopUploads context.CancelFunc
}

// FailingFor is for how long the store has been refusing a bulk that is
// still being retried (0 while every PUT works).
func (w *WAL) FailingFor() time.Duration {
	since := w.failingSince.Load()
	if since == 0 {
		return 0
	}
	return time.Since(time.Unix(0, since))
}

// draft is the open bulk: the object's bytes, header first, as they will be
// uploaded.
type draft struct {
	body   []byte
	frames int // bytes of frames in body
	done   []func(error)
	ends   map[uint64]uint64 // per stream, the end of its last frame
	since  time.Time         // when its first frame came
}

// bulk is a sealed draft: its sequence number and whether it is stored.
type bulk struct {
	draft
	seq    uint64
	stored bool
}

// maxSpareBulks bounds the buffers kept for reuse.
const maxSpareBulks = 4

// Open starts an empty WAL for the process (cfg.Node, cfg.Epoch). The key
// space must be fresh: a new node epoch per process guarantees it.
func Open(cfg Config) *WAL {
	cfg.defaults()
	w := &WAL{cfg: cfg, prefix: domain.WALPrefix(cfg.Node, cfg.Epoch), nextSeq: 1, sealed: map[uint64]*bulk{},
		queue: make(chan *bulk, cfg.MaxInFlight)}
	w.space = sync.NewCond(&w.mu)
	w.linger.putTimes = lingerPutTimes
	w.abandon, w.stopUploads = context.WithCancel(context.Background())
	return w
}

// Submit hands a frame to the WAL. On nil, done is called exactly once,
// with nil when the frame is durable or with the error that ended the WAL.
// Frames submitted in some order become durable in that order. Submit waits
// while MaxBufferedBytes are unacknowledged (backpressure).
func (w *WAL) Submit(f *domain.Frame, done func(error)) error {
	return w.submit(time.Time{}, done, f)
}

// SubmitBy is Submit that waits for room only until deadline, then fails
// with ErrBacklog, submitting nothing.
func (w *WAL) SubmitBy(deadline time.Time, f *domain.Frame, done func(error)) error {
	return w.submit(deadline, done, f)
}

// SubmitAll is Submit for frames that must become durable together: they
// go in one bulk, one object, so a crash leaves all of them or none (a
// recovery's rewrite relies on it). done is called once, for all of them.
func (w *WAL) SubmitAll(done func(error), frames ...*domain.Frame) error {
	return w.submit(time.Time{}, done, frames...)
}

// submit is SubmitAll that waits for room until deadline (zero: for as
// long as it takes).
func (w *WAL) submit(deadline time.Time, done func(error), frames ...*domain.Frame) error {
	need := 0
	for _, f := range frames {
		need += f.Size()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for woken := false; w.failed == nil && w.buffered > 0 && w.buffered+need > w.cfg.MaxBufferedBytes; {
		if w.linger.active && len(w.open.done) > 0 {
			w.sealLocked() // the draft may wait for this very submission, which cannot come in first
		}
		switch {
		case !deadline.IsZero() && !time.Now().Before(deadline):
			return ErrBacklog
		case !deadline.IsZero() && !woken:
			woken = true
			wake := time.AfterFunc(time.Until(deadline), func() { w.mu.Lock(); w.space.Broadcast(); w.mu.Unlock() })
			defer wake.Stop()
		}
		w.space.Wait()
	}
	if w.failed != nil {
		return w.failed
	}
	if w.open.ends == nil {
		w.startDraftLocked()
	}
	if len(w.open.done) == 0 {
		w.open.since = time.Now()
	}
	// Encoded straight into the open bulk: record bodies are copied once
	// on their way to the PUT.
	before := len(w.open.body)
	for _, f := range frames {
		w.open.body = domain.AppendFrame(w.open.body, f)
		w.open.ends[f.Stream] = max(w.open.ends[f.Stream], f.End())
	}
	enc := len(w.open.body) - before
	w.open.frames += enc
	w.open.done = append(w.open.done, done)
	w.buffered += enc
	w.considerLocked(false)
	return nil
}

// startDraftLocked opens the next bulk, in the buffer of a stored one if one
// is spare: bulks are large and short-lived, and reusing their buffers
// spares the allocator and the garbage collector.
func (w *WAL) startDraftLocked() {
	var buf []byte
	if n := len(w.spare); n > 0 {
		buf, w.spare = w.spare[n-1], w.spare[:n-1]
	}
	h := domain.BulkHeader{Node: w.cfg.Node, Epoch: w.cfg.Epoch, Seq: w.nextSeq}
	w.open = draft{body: domain.AppendBulkHeader(buf, h), ends: map[uint64]uint64{}}
}

func (w *WAL) sealLocked() {
	w.linger.stop()
	if w.cfg.MaxPutRate > 0 {
		w.lastSeal = time.Now()
	}
	b := &bulk{draft: w.open, seq: w.nextSeq}
	w.open = draft{}
	w.nextSeq++
	w.sealed[b.seq] = b
	w.inflight++
	w.uploads.Add(1)
	select {
	case w.queue <- b:
		// Every uploader not busy with a PUT takes one bulk from the
		// queue, and there are at least as many uploaders as bulks in
		// flight: none waits behind another's PUT.
		if w.uploaders < w.inflight {
			w.uploaders++
			go w.uploadQueued(w.queue)
		}
	default:
		// Not expected: bulks in flight never pass MaxInFlight, the
		// queue's size. But a full queue must not block the seal, which
		// holds the WAL's lock.
		go w.upload(b)
	}
}

// uploadQueued uploads queued bulks until Close closes the queue.
func (w *WAL) uploadQueued(queue <-chan *bulk) {
	for b := range queue {
		w.upload(b)
	}
}

func (w *WAL) upload(b *bulk) {
	defer w.uploads.Done()
	start := time.Now()
	err := w.put(domain.WALKey(w.cfg.Node, w.cfg.Epoch, b.seq), b.body)
	took := time.Since(start)
	w.puts.Add(1)
	w.submissions.Add(int64(len(b.done)))
	w.putNanos.Add(int64(took))
	if err == nil && w.cfg.PutSeconds != nil {
		w.cfg.PutSeconds.Observe(took.Seconds())
	}
	if err == nil && w.cfg.PutBytes != nil {
		w.cfg.PutBytes.Observe(float64(len(b.body)))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inflight--
	if err != nil {
		w.failLocked(err)
		return
	}
	b.stored = true
	if w.cfg.MaxLinger > 0 {
		w.linger.observe(min(took, w.cfg.MaxLinger))
	}
	w.pacer.observe(took)
	if len(w.spare) < maxSpareBulks && cap(b.body) <= 2*w.cfg.MaxBulkBytes {
		// The store is done with the body: it answered success.
		w.spare = append(w.spare, b.body[:0])
	}
	b.body = nil
	acked := w.advanceLocked()
	if w.failed != nil || (w.inflight == 0 && acked > 0 && w.lingerLocked(acked)) {
		return
	}
	w.considerLocked(true)
}

// canSealLocked reports whether the draft holds frames that may leave now:
// the WAL works and an upload slot is free.
func (w *WAL) canSealLocked() bool {
	return w.failed == nil && len(w.open.done) > 0 && w.inflight < w.cfg.MaxInFlight
}

// advanceLocked acknowledges stored bulks in sequence order and returns the
// number of submissions it acknowledged.
func (w *WAL) advanceLocked() (acked int) {
	defer w.space.Broadcast()
	for {
		b := w.sealed[w.acked+1]
		if b == nil || !b.stored {
			return
		}
		delete(w.sealed, b.seq)
		w.acked = b.seq
		w.buffered -= b.frames
		for _, done := range b.done {
			done(nil)
		}
		acked += len(b.done)
		b.done = nil
		w.retained = append(w.retained, b)
	}
}

// failLocked ends the WAL: every frame not yet acknowledged fails, even if
// its own bulk was stored, because an earlier one was not.
func (w *WAL) failLocked(err error) {
	if w.failed != nil {
		return
	}
	w.failed = err
	if !errors.Is(err, ErrClosed) {
		w.cfg.Logger.Error("WAL failed: no further appends are acknowledged on this process", "prefix", w.prefix, "err", err)
	}
	for seq := w.acked + 1; seq < w.nextSeq; seq++ {
		if b := w.sealed[seq]; b != nil {
			for _, done := range b.done {
				done(err)
			}
		}
	}
	for _, done := range w.open.done {
		done(err)
	}
	w.sealed, w.open, w.buffered = map[uint64]*bulk{}, draft{}, 0
	w.space.Broadcast()
}

// Err returns the error that ended the WAL, or nil while it works.
func (w *WAL) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// Store is the object store the WAL writes to. The WALs of the node's
// other processes live there too: that is where Fence reads them.
func (w *WAL) Store() ports.ObjectStore { return w.cfg.Store }

// Close uploads what is buffered, waits for every upload to finish (for at
// most CloseWithin: a store that is down does not hold a shutdown), then
// fails further submissions, and what was not stored, with ErrClosed.
func (w *WAL) Close() error {
	giveUp := time.AfterFunc(w.cfg.CloseWithin, w.abandonUploads)
	defer giveUp.Stop()
	w.mu.Lock()
	w.closing = true // no lingers: what is buffered leaves as soon as it can
	if w.canSealLocked() {
		w.sealLocked()
	}
	for w.failed == nil && (w.inflight > 0 || len(w.open.done) > 0) {
		w.space.Wait()
	}
	err := w.failed
	w.failLocked(ErrClosed)
	if w.queue != nil { // nothing is sealed once the WAL has failed
		close(w.queue)
		w.queue = nil
	}
	w.mu.Unlock()
	w.uploads.Wait()
	w.stopUploads()
	return err
}

// abandonUploads ends the retries of uploads still in flight; Close then
// fails their frames.
func (w *WAL) abandonUploads() {
	w.stopUploads()
	w.mu.Lock()
	w.failLocked(fmt.Errorf("%w: the object store did not take the rest within %v", ErrClosed, w.cfg.CloseWithin))
	w.mu.Unlock()
}

// Stats counts stored bulks since the WAL opened: Puts of them, holding
// Submissions (a Submit or a SubmitAll each), which took PutTime in all,
// retries included.
type Stats struct {
	Puts, Submissions int64
	PutTime           time.Duration
	// Buffered is the bytes submitted and not yet acknowledged: the
	// backlog MaxBufferedBytes bounds.
	Buffered int
}

// Stats returns upload counters.
func (w *WAL) Stats() Stats {
	w.mu.Lock()
	buffered := w.buffered
	w.mu.Unlock()
	return Stats{Puts: w.puts.Load(), Submissions: w.submissions.Load(), PutTime: time.Duration(w.putNanos.Load()), Buffered: buffered}
}

// put stores one bulk, retrying transient errors for RetryFor (or until
// Close abandons it). A precondition failure is resolved by reading the key
// back: our own bytes mean an earlier attempt succeeded; anything else
// means we were fenced.
func (w *WAL) put(key string, body []byte) error {
	start, backoff := time.Now(), 10*time.Millisecond
	for {
		err := w.tryPut(key, body)
		if err == nil || errors.Is(err, ErrFenced) {
			if err == nil {
				w.logRecovery()
			}
			return err
		}
		first := w.failingSince.CompareAndSwap(0, time.Now().UnixNano())
		if w.cfg.RetryFor > 0 && time.Since(start) > w.cfg.RetryFor {
			return fmt.Errorf("%w: upload %s: %w", ErrFailed, key, err)
		}
		w.logRetry(first, key, err, backoff)
		select {
		case <-time.After(backoff):
		case <-w.abandon.Done():
			return fmt.Errorf("%w before %s was stored: %w", ErrClosed, key, err)
		}
		backoff = min(2*backoff, time.Second)
	}
}

// logRetry warns once when uploads start failing, not on every retry
// while the object store is down (those go to debug).
func (w *WAL) logRetry(first bool, key string, err error, backoff time.Duration) {
	if first {
		w.cfg.Logger.Warn("WAL uploads failing, retrying until they succeed", "key", key, "err", err)
		return
	}
	w.cfg.Logger.Debug("WAL upload failed, retrying", "key", key, "err", err, "backoff", backoff)
}

// logRecovery says once that uploads succeed again after failing.
func (w *WAL) logRecovery() {
	if since := w.failingSince.Swap(0); since != 0 {
		w.cfg.Logger.Info("WAL uploads succeed again", "failed_for", time.Since(time.Unix(0, since)).Round(time.Millisecond))
	}
}

func (w *WAL) tryPut(key string, body []byte) error {
	ctx, cancel := context.WithTimeout(w.abandon, 10*time.Second)
	defer cancel()
	err := w.cfg.Store.PutIfAbsent(ctx, key, body)
	if !errors.Is(err, ports.ErrPrecondition) {
		return err
	}
	stored, gerr := w.cfg.Store.Get(ctx, key, 0, -1)
	switch {
	case gerr != nil:
		return gerr
	case string(stored) == string(body):
		return nil
	case domain.IsFence(stored):
		return fmt.Errorf("%w (at %s)", ErrFenced, key)
	}
	return fmt.Errorf("%w: a foreign object holds %s", ErrFenced, key)
}

// Retire deletes acknowledged bulks whose every frame covered reports as
// committed elsewhere: the oldest run of them, in one Delete, never the
// newest acknowledged bulk. If the Delete fails, some of the run may be gone
// and the rest is tried again next time: Fence steps over such holes.
func (w *WAL) Retire(ctx context.Context, covered func(stream, end uint64) bool) error {
	w.retiring.Lock()
	defer w.retiring.Unlock()
	w.mu.Lock()
	// Only Retire removes retained bulks, so this prefix stays put.
	older := slices.Clone(w.retained[:max(len(w.retained)-1, 0)]) // the last one is the newest: keep it
	w.mu.Unlock()
	n := 0
	for n < len(older) && allCovered(older[n].ends, covered) {
		n++
	}
	if n == 0 {
		return nil
	}
	keys := make([]string, n)
	for i, b := range older[:n] {
		keys[i] = domain.WALKey(w.cfg.Node, w.cfg.Epoch, b.seq)
	}
	if err := w.cfg.Store.Delete(ctx, keys...); err != nil {
		return fmt.Errorf("wal: retire bulks %d-%d: %w", older[0].seq, older[n-1].seq, err)
	}
	w.mu.Lock()
	w.retained = w.retained[n:]
	w.mu.Unlock()
	return nil
}

func allCovered(ends map[uint64]uint64, covered func(stream, end uint64) bool) bool {
	for stream, end := range ends {
		if !covered(stream, end) {
			return false
		}
	}
	return true
}
