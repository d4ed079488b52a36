package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// benchOptions are pico bench's flags.
type benchOptions struct {
	duration       time.Duration
	warmup         time.Duration // appended first, not counted
	metrics        []string      // /metrics URLs of the nodes, for the cost
	readers        int           // live readers a stream, checking every record
	catchUpReaders int           // readers replaying the streams from their start
	window         int           // appends in flight
	batch          int           // records per append
	streams        int
	connections    int // separate connection pools
	recordSize     int
	keep           bool
	asJSON         bool
	producer       bool    // through the Go client's Producer, one a stream
	rate           float64 // records/s offered, open loop (0: closed loop)
	output         string  // the CSV of the run second by second
	plot           string  // the SVG of the run second by second
}

// A request stays within the server's default limits: 8 MiB of body, with
// room for the framing (a Pico batch's 8 bytes a record, a JSON array's
// quotes and commas), and 65,536 records.
const (
	maxBenchRequestBytes  = 8<<20 - 64<<10
	benchFramingPerRecord = 16
	maxBenchBatch         = 65536
)

func runBench(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	cmd := newCommand("bench", "pico bench [-d DURATION] [--warmup DURATION] [-w N] [-b N] [--streams N] [--connections N] [--record-size BYTES] [--metrics URL,...] [--readers N] [--catchup-readers N] [--producer] [--rate N] [--output FILE.csv] [--plot FILE.svg] [--keep] [--json]")
	cmd.notes = `Creates --streams streams named /bench/<pid>-<ms>-<i> and appends records of
--record-size bytes to them for --warmup, uncounted, then for --duration
(seconds, as in -d 60, or a duration, as in -d 1m30s), --window appends in
flight, each of --batch records. At the deadline it stops sending and waits
for the appends in flight: the drain, which the summary reports. Each of
the --window writers goes through the streams in turn, and writer i uses
connection pool i mod --connections (so pools beyond --window stay unused). An append counts once it is acknowledged, which
is once it is durable. Prints the rate every second to stderr and a summary
(throughput and append latency) to stdout, then deletes the streams unless
--keep. Latency includes the wait behind the window: with W appends in flight
at R appends/s, an append takes W/R s on average (Little's law): once R
stops growing with W, a larger window adds only queueing; -w 1 measures an
append alone.

With --rate N the run is open loop: appends are due at N records/s in all
(N / --batch appends/s), sent by the --window writers as each comes due,
and an append's latency counts from when it was due, so a server that
falls behind is charged for the wait (no coordinated omission); if the
window is too small for the rate, the summary's throughput says so.

Every second a line on stderr gives the throughput, the appends in flight
and the p50 and p99 of the appends acknowledged in that second; --output
writes those figures as CSV and --plot as an SVG of throughput and
latency over time.

With --metrics (the /metrics URL of each node's admin listener, comma
separated) it also reports what the counted appends cost in object-store
requests: PUTs and GETs, records per PUT, PUTs per million appends, and the
price at S3 Standard's request prices. With --protocol ds and --batch
above 1 the streams are application/json and each record is a JSON string.

With --producer (Pico only) each stream gets one idempotent Producer of the
Go client: records are appended one at a time, --batch bounds its batches
and --window its batches in flight, and the latency is per record, from
Append to its acknowledgement.

With --readers N, N live readers a stream follow it from its start with
long-polls. Each record then carries its writer, its seq, its send time and
a hash chain over the writer's earlier records on the stream; the readers
check every one (none missing, repeated, reordered or changed) and measure
end-to-end latency, from the append's send to the record's arrival at a
reader. After the writers stop, the run waits for the readers to read every
acknowledged record, and fails if they do not or a check fails.

With --catchup-readers N, N readers replay the streams while the writers
run: each reads a stream from its start to its tail as fast as it can, then
the next, and the summary gives the MiB/s they read. Beside the writers'
latency, this shows what readers replaying history cost appends.
`
	o := benchOptions{}
	o.duration = 15 * time.Second
	cmd.fs.Var(secondsOrDuration{&o.duration}, "d", "how long to append: seconds (60) or a duration (1m)")
	cmd.fs.Var(secondsOrDuration{&o.duration}, "duration", "same as -d")
	cmd.fs.Var(secondsOrDuration{&o.warmup}, "warmup", "append this long first, not counted")
	cmd.fs.Func("metrics", "the nodes' /metrics URLs, comma separated, to report the object-store requests the run cost", func(v string) error {
		o.metrics = append(o.metrics, splitList(v)...)
		return nil
	})
	cmd.fs.IntVar(&o.window, "w", 32, "appends in flight")
	cmd.fs.IntVar(&o.window, "window", 32, "same as -w")
	cmd.fs.IntVar(&o.batch, "b", 1, "records per append")
	cmd.fs.IntVar(&o.batch, "batch", 1, "same as -b")
	cmd.fs.IntVar(&o.streams, "streams", 1, "streams to append to")
	cmd.fs.IntVar(&o.connections, "connections", 1, "separate connection pools")
	cmd.fs.IntVar(&o.recordSize, "record-size", 1024, "bytes per record")
	cmd.fs.BoolVar(&o.keep, "keep", false, "keep the streams afterwards")
	cmd.fs.BoolVar(&o.asJSON, "json", false, "print the summary as JSON")
	cmd.fs.IntVar(&o.readers, "readers", 0, "live readers a stream, checking every record and timing its delivery")
	cmd.fs.IntVar(&o.catchUpReaders, "catchup-readers", 0, "readers replaying the streams from their start, as fast as they can, while the writers run")
	cmd.fs.BoolVar(&o.producer, "producer", false, "append through one idempotent producer a stream (Pico)")
	cmd.fs.Float64Var(&o.rate, "rate", 0, "records/s to offer, open loop (0: each writer sends its next append when the last is acknowledged)")
	cmd.fs.StringVar(&o.output, "output", "", "write the run second by second to this CSV file")
	cmd.fs.StringVar(&o.plot, "plot", "", "draw throughput and latency over time to this SVG file")
	if _, err := cmd.parse(args, 0, 0); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return cmd.usageError(err.Error())
	}
	settings, cred, err := cmd.connection() // once: a profile is a file read
	if err != nil {
		return err
	}
	clients := make([]streamClient, o.connections)
	for i := range clients {
		clients[i] = clientFor(settings, cred)
	}
	if o.producer && clients[0].protocol() != "pico" {
		return cmd.usageError("--producer needs --protocol pico")
	}
	if least := chainRecordSize(quotedRecords(clients[0], o)); o.readers > 0 && (o.producer || o.recordSize < least) {
		return cmd.usageError(fmt.Sprintf("--readers needs records of at least %d bytes here, to carry their check, and not --producer", least))
	}
	b, err := newBench(ctx, o, clients)
	if b != nil && !o.keep {
		defer b.deleteStreams(stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "appending to %d %s stream(s) under /bench/ for %v after a warmup of %v: %d in flight, %d x %d bytes each\n",
		o.streams, clients[0].protocol(), o.duration, o.warmup, o.window, o.batch, o.recordSize)
	run := b.run
	if o.producer {
		run = b.runProducers
	}
	res, err := run(ctx, stderr)
	if printErr := res.print(stdout, o.asJSON); err == nil {
		err = printErr
	}
	return err
}

func (o benchOptions) check() error {
	switch {
	case o.duration <= 0 || o.warmup < 0:
		return fmt.Errorf("--duration must be above 0 and --warmup 0 or more")
	case o.rate < 0:
		return fmt.Errorf("--rate must be 0 (closed loop) or more")
	case o.readers < 0 || o.readers > 1000 || o.catchUpReaders < 0 || o.catchUpReaders > 1000:
		return fmt.Errorf("--readers and --catchup-readers must be from 0 to 1000")
	case o.window < 1, o.batch < 1, o.streams < 1, o.connections < 1, o.recordSize < 1:
		return fmt.Errorf("--window, --batch, --streams, --connections and --record-size must be 1 or more")
	case o.batch > maxBenchBatch:
		return fmt.Errorf("--batch is over the %d records a request may carry", maxBenchBatch)
	case o.batch*(o.recordSize+benchFramingPerRecord) > maxBenchRequestBytes:
		return fmt.Errorf("--batch x --record-size is over the %d bytes a request may carry", maxBenchRequestBytes)
	}
	return nil
}

// bench is one run: its streams, a sender per stream and connection pool,
// and the records every append carries.
type bench struct {
	o       benchOptions
	clients []streamClient
	names   []string
	send    [][]appendFunc // [connection][stream]
	records [][]byte
	quoted  bool          // each record is a JSON string
	readers *benchReaders // with --readers
	catchUp *benchCatchUp // with --catchup-readers
	ackedBy [][]uint64    // [stream][writer]: records acknowledged, with --readers
}

// newBench creates the streams. On an error it returns what it created, so
// that the caller can delete it.
func newBench(ctx context.Context, o benchOptions, clients []streamClient) (*bench, error) {
	b := &bench{o: o, clients: clients, quoted: quotedRecords(clients[0], o)}
	contentType, record := "application/octet-stream", bytes.Repeat([]byte("x"), o.recordSize)
	if b.quoted {
		// A Durable Streams batch is a JSON array: each record is a string.
		contentType, record = "application/json", []byte(`"`+string(record[:max(o.recordSize-2, 0)])+`"`)
	}
	for range o.batch {
		b.records = append(b.records, record)
	}
	stamp := fmt.Sprintf("/bench/%d-%d", os.Getpid(), time.Now().UnixMilli())
	for i := range o.streams {
		name := fmt.Sprintf("%s-%d", stamp, i)
		if _, _, err := clients[0].create(ctx, name, createOptions{contentType: contentType}); err != nil {
			return b, streamError(name, err)
		}
		b.names = append(b.names, name)
	}
	b.send = make([][]appendFunc, len(clients))
	for c, client := range clients {
		for _, name := range b.names {
			send, err := client.appender(ctx, name, appendOptions{contentType: contentType, batch: o.batch})
			if err != nil {
				return b, streamError(name, err)
			}
			b.send[c] = append(b.send[c], send)
		}
	}
	return b, nil
}

// run appends for the duration, or until the first failure or ctx ends.
func (b *bench) run(ctx context.Context, stderr io.Writer) (benchResult, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	from, deadline := b.window()
	tally := newBenchTally(stop, from, b.o.rate/float64(b.o.batch))
	if b.o.readers > 0 {
		b.readers = b.startReaders(ctx, from)
		b.ackedBy = make([][]uint64, len(b.names))
		for s := range b.ackedBy {
			b.ackedBy[s] = make([]uint64, b.o.window)
		}
	}
	if b.o.catchUpReaders > 0 {
		b.catchUp = b.startCatchUp(ctx, from)
	}
	var wg sync.WaitGroup
	for w := range b.o.window {
		wg.Go(func() { b.write(ctx, w, deadline, tally) })
	}
	return b.finish(ctx, deadline, &wg, tally, stderr)
}

// write is writer w: it keeps to connection pool w and goes through the
// streams in turn, starting at stream w. With readers, its records are its
// own and carry their chain.
func (b *bench) write(ctx context.Context, w int, deadline time.Time, tally *benchTally) {
	records, links := b.records, []chainLink(nil)
	if b.ackedBy != nil {
		records, links = make([][]byte, len(b.records)), make([]chainLink, len(b.names))
		for i, r := range b.records {
			records[i] = bytes.Clone(r)
		}
	}
	for i := w; ctx.Err() == nil; i++ {
		t0, ok := tally.next(ctx, deadline)
		if !ok {
			return
		}
		s := i % len(b.names)
		if links != nil {
			for _, r := range records {
				links[s].stamp(b.text(r), uint32(w), t0)
			}
		}
		if _, err := b.send[w%len(b.send)][s](ctx, records); err != nil {
			tally.fail(ctx, b.names[s], err)
			return
		}
		if links != nil {
			b.ackedBy[s][w] = links[s].next
		}
		tally.acked(t0)
	}
}

// text is a record without a JSON string's quotes.
func (b *bench) text(r []byte) []byte {
	if b.quoted {
		return r[1 : len(r)-1]
	}
	return r
}

// quotedRecords reports whether a run's records are JSON strings: a
// Durable Streams batch is a JSON array.
func quotedRecords(c streamClient, o benchOptions) bool { return c.protocol() == "ds" && o.batch > 1 }

// window is when a run starts counting, after the warmup, and when it
// stops sending.
func (b *bench) window() (from, deadline time.Time) {
	from = time.Now().Add(b.o.warmup)
	return from, from.Add(b.o.duration)
}

// finish waits for the writers, printing progress, and sums the run up,
// with its cost if the nodes' metrics are given.
func (b *bench) finish(ctx context.Context, deadline time.Time, wg *sync.WaitGroup, tally *benchTally, stderr io.Writer) (benchResult, error) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	before := b.scrapeAt(ctx, tally.from, done, stderr)
	samples := b.progress(tally, done, stderr)
	// The writers are done (progress returned): the tally is still.
	last := tally.lastAck
	if last.IsZero() {
		last = time.Now()
	}
	res := benchResult{opts: b.o, protocol: b.clients[0].protocol(), appends: tally.appends.Load(),
		warmupAppends: tally.warmup.Load(), unsentDue: tally.unsent(deadline), elapsed: last.Sub(tally.from), drain: max(last.Sub(deadline), 0), latency: tally.latency}
	if b.o.keep {
		res.kept = b.names
	}
	if c, ok := <-before; ok {
		after, err := scrapeStore(context.WithoutCancel(ctx), b.o.metrics) // a failed run's cost too
		if err != nil {
			fmt.Fprintf(stderr, "pico bench: no cost: %v\n", err)
		} else {
			res.cost = after.cost(c, res.appends, res.appends*int64(b.o.batch))
		}
	}
	err := tally.firstErr
	if cu := b.catchUp; cu != nil {
		if cerr := cu.stop(); err == nil {
			err = cerr
		}
		res.catchUp = cu
	}
	if rs := b.readers; rs != nil {
		if rerr := rs.settle(b.ackedBy); err == nil {
			err = rerr
		}
		res.readers = rs
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // interrupted: the summary covers what was done
	}
	if serr := b.writeSeries(samples); err == nil {
		err = serr
	}
	return res, err
}

// benchTally counts a run's acknowledged appends and their latency, and
// keeps its first failure. Appends sent before from are the warmup's.
type benchTally struct {
	start   time.Time // the warmup's start
	from    time.Time
	appends atomic.Int64
	warmup  atomic.Int64
	sent    atomic.Int64
	// With --rate: appends are due every interval from start; due counts
	// those handed out.
	interval time.Duration
	due      atomic.Int64
	// One histogram for all writers (one each would take 140 KB a
	// writer): recording under a lock costs nothing beside a round trip.
	mu       sync.Mutex
	latency  *hdrhistogram.Histogram
	second   *hdrhistogram.Histogram // this second's, warmup too, for the progress
	lastAck  time.Time
	once     sync.Once
	firstErr error
	stop     context.CancelFunc
}

// newBenchTally starts a tally whose counted appends are those sent from
// from on, after a warmup that starts now; appendsPerSec > 0 paces them.
func newBenchTally(stop context.CancelFunc, from time.Time, appendsPerSec float64) *benchTally {
	t := &benchTally{start: time.Now(), from: from, latency: newLatencyHistogram(), second: newLatencyHistogram(), stop: stop}
	if appendsPerSec > 0 {
		t.interval = max(time.Duration(float64(time.Second)/appendsPerSec), time.Nanosecond)
	}
	return t
}

// next is when the caller's next append counts as sent: now, or, paced,
// when it is due (after waiting for it, if it is not yet). It reports
// false once the deadline or ctx is reached.
func (t *benchTally) next(ctx context.Context, deadline time.Time) (time.Time, bool) {
	at := time.Now()
	if t.interval > 0 {
		at = t.start.Add(time.Duration(t.due.Add(1)-1) * t.interval)
		if !at.Before(deadline) || !time.Now().Before(deadline) {
			return at, false
		}
		if wait := time.Until(at); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return at, false
			}
		}
	}
	if ctx.Err() != nil || !at.Before(deadline) {
		return at, false
	}
	t.sent.Add(1)
	return at, true
}

// unsent is how many paced appends were due before deadline and never
// sent: the writers were all waiting for acknowledgements.
func (t *benchTally) unsent(deadline time.Time) int64 {
	if t.interval <= 0 {
		return 0
	}
	due := int64((deadline.Sub(t.start) + t.interval - 1) / t.interval)
	return max(due-t.sent.Load(), 0)
}

// acked counts an append sent at t0 and acknowledged now.
func (t *benchTally) acked(t0 time.Time) {
	now := time.Now()
	took := min(now.Sub(t0).Microseconds(), t.latency.HighestTrackableValue()) // beyond a minute: as a minute
	warmup := t0.Before(t.from)
	t.mu.Lock()
	_ = t.second.RecordValue(took)
	if !warmup {
		_ = t.latency.RecordValue(took)
		t.lastAck = now
	}
	t.mu.Unlock()
	if warmup {
		t.warmup.Add(1)
		return
	}
	t.appends.Add(1)
}

// fail keeps the run's first failure on stream name and stops the run; a
// failure after ctx ended is the stop, not a failure.
func (t *benchTally) fail(ctx context.Context, name string, err error) {
	if ctx.Err() == nil {
		t.once.Do(func() { t.firstErr = streamError(name, err) })
	}
	t.stop()
}

// sample takes the second that ends at now, since the last at lastAt with
// last appends acknowledged in all.
func (t *benchTally) sample(now, lastAt time.Time, last int64, o benchOptions) (benchSample, int64) {
	n := t.appends.Load() + t.warmup.Load()
	rate := float64(n-last) / now.Sub(lastAt).Seconds()
	t.mu.Lock()
	p50, p99 := float64(t.second.ValueAtQuantile(50))/1000, float64(t.second.ValueAtQuantile(99))/1000
	t.second.Reset()
	t.mu.Unlock()
	return benchSample{at: now.Sub(t.start), appends: rate, records: rate * float64(o.batch),
		mib: rate * float64(o.batch*o.recordSize) / (1 << 20), inFlight: t.sent.Load() - n,
		p50: p50, p99: p99, warmup: now.Before(t.from)}, n
}

// progress prints a sample every second until done closes, and returns
// them.
func (b *bench) progress(tally *benchTally, done <-chan struct{}, stderr io.Writer) []benchSample {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var samples []benchSample
	last, lastAt := int64(0), tally.start
	for {
		select {
		case <-done:
			return samples
		case now := <-tick.C:
			var s benchSample
			s, last = tally.sample(now, lastAt, last, b.o)
			lastAt = now
			samples = append(samples, s)
			fmt.Fprintln(stderr, s.line())
		}
	}
}

// scrapeAt reads the nodes' store counters at the moment at, unless done
// closes first; the channel gives nothing without --metrics or on a
// failure, which it reports.
func (b *bench) scrapeAt(ctx context.Context, at time.Time, done <-chan struct{}, stderr io.Writer) <-chan storeCounts {
	out := make(chan storeCounts, 1)
	if len(b.o.metrics) == 0 {
		close(out)
		return out
	}
	go func() {
		defer close(out)
		select {
		case <-time.After(time.Until(at)):
		case <-done:
			return
		}
		c, err := scrapeStore(ctx, b.o.metrics)
		if err != nil {
			fmt.Fprintf(stderr, "pico bench: no cost: %v\n", err)
			return
		}
		out <- c
	}()
	return out
}

// deleteStreams removes the run's streams, however the run ended.
func (b *bench) deleteStreams(stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range b.names {
		if err := b.clients[0].delete(ctx, name); err != nil {
			fmt.Fprintf(stderr, "pico bench: could not delete %s: %v\n", name, err)
		}
	}
}

// newLatencyHistogram holds latencies from 1 µs to a minute, to three
// significant digits.
func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, time.Minute.Microseconds(), 3)
}

// benchResult is what a run did.
type benchResult struct {
	opts          benchOptions
	protocol      string
	kept          []string // the streams, with --keep
	appends       int64    // counted: sent after the warmup
	warmupAppends int64
	unsentDue     int64
	elapsed       time.Duration           // from the warmup's end to the last acknowledgement
	drain         time.Duration           // from the deadline to the last acknowledgement
	latency       *hdrhistogram.Histogram // µs per append
	cost          *benchCost              // nil without --metrics
	readers       *benchReaders           // nil without --readers
	catchUp       *benchCatchUp           // nil without --catchup-readers
}

// benchSummary is the summary printed with --json.
type benchSummary struct {
	Protocol      string             `json:"protocol"`
	Seconds       float64            `json:"seconds"`
	Appends       int64              `json:"appends"`
	Records       int64              `json:"records"`
	Bytes         int64              `json:"bytes"`
	AppendsPerSec float64            `json:"appends_per_sec"`
	RecordsPerSec float64            `json:"records_per_sec"`
	MiBPerSec     float64            `json:"mib_per_sec"`
	LatencyMs     map[string]float64 `json:"latency_ms"` // p50, p90, p99, p99.9, max
	// InFlight is the window; QueueingMs the mean latency Little's law
	// gives for it at the measured rate (InFlight / AppendsPerSec).
	InFlight int `json:"in_flight"`
	// OfferedRecordsPerSec is --rate: the run was open loop.
	OfferedRecordsPerSec float64 `json:"offered_records_per_sec,omitempty"`
	// UnsentDue: with --rate, appends due before the deadline that were
	// never sent, the window being full: the server fell behind.
	UnsentDue     int64   `json:"unsent_due_appends,omitempty"`
	QueueingMs    float64 `json:"window_latency_ms"`
	WarmupAppends int64   `json:"warmup_appends"`
	DrainMs       float64 `json:"drain_ms"`
	// Cost is the object-store requests of the counted appends (--metrics).
	Cost *benchCost `json:"cost,omitempty"`
	// With --readers: records the readers checked (each reader counts
	// its own), and end-to-end latency, send to a reader's receipt.
	Readers    int                `json:"readers,omitempty"`
	Verified   int64              `json:"records_verified,omitempty"`
	EndToEndMs map[string]float64 `json:"end_to_end_ms,omitempty"`
	// With --catchup-readers: what they read, from the warmup's end until
	// the writers were done.
	CatchUpReaders   int     `json:"catchup_readers,omitempty"`
	CatchUpMiBPerSec float64 `json:"catchup_mib_per_sec,omitempty"`
	// Streams names the streams kept (--keep).
	Streams []string `json:"streams,omitempty"`
}

func (r benchResult) summary() benchSummary {
	records := r.appends * int64(r.opts.batch)
	secs := r.elapsed.Seconds()
	s := benchSummary{Protocol: r.protocol, Seconds: secs, Appends: r.appends, Records: records,
		Bytes: records * int64(r.opts.recordSize), LatencyMs: map[string]float64{}, Streams: r.kept,
		InFlight: r.opts.window, OfferedRecordsPerSec: r.opts.rate, UnsentDue: r.unsentDue, WarmupAppends: r.warmupAppends, DrainMs: ms(r.drain), Cost: r.cost}
	if secs > 0 {
		s.AppendsPerSec, s.RecordsPerSec = float64(r.appends)/secs, float64(records)/secs
		s.MiBPerSec = float64(s.Bytes) / (1 << 20) / secs
	}
	if s.AppendsPerSec > 0 {
		s.QueueingMs = float64(r.opts.window) / s.AppendsPerSec * 1000
	}
	if r.latency != nil {
		s.LatencyMs = quantilesMs(r.latency)
	}
	if r.readers != nil {
		s.Readers = r.opts.readers
		r.readers.summary(&s)
	}
	if r.catchUp != nil {
		s.CatchUpReaders = r.opts.catchUpReaders
		r.catchUp.summary(&s)
	}
	return s
}

// quantilesMs is a µs histogram's p50, p90, p99, p99.9 and max in ms.
func quantilesMs(h *hdrhistogram.Histogram) map[string]float64 {
	out := map[string]float64{}
	if h.TotalCount() == 0 {
		return out
	}
	for _, q := range []struct {
		name string
		at   float64
	}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}} {
		out[q.name] = float64(h.ValueAtQuantile(q.at)) / 1000
	}
	out["max"] = float64(h.Max()) / 1000
	return out
}

func (r benchResult) print(w io.Writer, asJSON bool) error {
	s := r.summary()
	if asJSON {
		return json.NewEncoder(w).Encode(s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "appends: %d (%d records, %d bytes) in %.1f s, after %d in the warmup\n", s.Appends, s.Records, s.Bytes, s.Seconds, s.WarmupAppends)
	fmt.Fprintf(&b, "throughput: %.0f appends/s, %.0f records/s, %.1f MiB/s\n", s.AppendsPerSec, s.RecordsPerSec, s.MiBPerSec)
	if s.OfferedRecordsPerSec > 0 {
		fmt.Fprintf(&b, "offered: %.0f records/s, open loop: latency counts from when each append was due\n", s.OfferedRecordsPerSec)
	}
	fmt.Fprintf(&b, "append latency (ms): p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n",
		s.LatencyMs["p50"], s.LatencyMs["p90"], s.LatencyMs["p99"], s.LatencyMs["p99.9"], s.LatencyMs["max"])
	if e := s.EndToEndMs; s.Readers > 0 {
		fmt.Fprintf(&b, "end to end (ms, send to a reader): p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", e["p50"], e["p90"], e["p99"], e["p99.9"], e["max"])
		fmt.Fprintf(&b, "integrity: %d records checked by %d reader(s) a stream\n", s.Verified, s.Readers)
	}
	if s.CatchUpReaders > 0 {
		fmt.Fprintf(&b, "catch-up: %d reader(s) replaying the streams from their start read %.1f MiB/s\n", s.CatchUpReaders, s.CatchUpMiBPerSec)
	}
	if s.OfferedRecordsPerSec > 0 {
		fmt.Fprintf(&b, "window: at most %d in flight; %d appends due before the deadline found it full and were never sent", s.InFlight, s.UnsentDue)
	} else {
		fmt.Fprintf(&b, "window: %d in flight at %.0f appends/s, so an append's mean latency is %.2f ms (Little's law: window / rate);"+
			" once throughput stops growing with -w, a larger window adds only queueing, and -w 1 measures an append alone",
			s.InFlight, s.AppendsPerSec, s.QueueingMs)
	}
	fmt.Fprintf(&b, "\ndrain: the appends in flight at the deadline took %.1f ms more\n", s.DrainMs)
	if c := s.Cost; c != nil {
		fmt.Fprintf(&b, "object store: %.0f PUTs (%.0f of the WAL, %.1f records each), %.0f GETs, %.0f LISTs, %.0f DELETEs\n",
			c.Puts, c.WALPuts, c.RecordsPerWALPut, c.Gets, c.Lists, c.Deletes)
		fmt.Fprintf(&b, "cost: %.0f PUTs per million appends (%.0f per million records); $%.4f at S3 Standard request prices ($%.2f per million appends)\n",
			c.PutsPerMillionAppend, c.PutsPerMillionRecord, c.DollarsS3Standard, perMillion(c.DollarsS3Standard, s.Appends))
	}
	for _, name := range s.Streams {
		fmt.Fprintf(&b, "kept %s\n", name)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func perMillion(v float64, n int64) float64 {
	if n == 0 {
		return 0
	}
	return v / float64(n) * 1e6
}
