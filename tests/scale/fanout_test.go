package scale

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
)

// fanoutSettings come from the environment: PICOMQ_FANOUT_READERS (the
// readers of the one stream, default 1,000), PICOMQ_FANOUT_STREAMS (the
// streams of one reader each, default 10,000), PICOMQ_FANOUT_RATE (appends
// a second, default 40) and PICOMQ_FANOUT_APPEND_FOR (how long the appends
// go on, default 5s). The rate is modest so that the figures are latency,
// not throughput.
type fanoutSettings struct {
	readers   int
	streams   int
	rate      int
	appendFor time.Duration
}

func fanoutSettingsFromEnv(b *testing.B) fanoutSettings {
	s := fanoutSettings{
		readers:   envCount(b, "PICOMQ_FANOUT_READERS", 1000),
		streams:   envCount(b, "PICOMQ_FANOUT_STREAMS", 10_000),
		rate:      envCount(b, "PICOMQ_FANOUT_RATE", 40),
		appendFor: envDuration(b, "PICOMQ_FANOUT_APPEND_FOR", 5*time.Second),
	}
	if s.appends() < 1 {
		b.Fatalf("PICOMQ_FANOUT_RATE=%d for %v is no append", s.rate, s.appendFor)
	}
	return s
}

func (s fanoutSettings) appends() int { return int(float64(s.rate) * s.appendFor.Seconds()) }

// shape is how the readers sit: perStream readers on each of streams
// streams, reading with live (sse or long-poll).
type shape struct {
	live      string
	streams   int
	perStream int
}

func (s shape) readers() int { return s.streams * s.perStream }

// BenchmarkFanout measures how long after an append's acknowledgement each
// live reader has the record: many readers of one stream (SSE, then
// long-poll), and many streams of one long-poll reader each. b.N is
// ignored (use -benchtime 1x). Figures are reported as metrics and logged
// as a table.
func BenchmarkFanout(b *testing.B) {
	cfg := fanoutSettingsFromEnv(b)
	shapes := []shape{
		{live: "sse", streams: 1, perStream: cfg.readers},
		{live: "long-poll", streams: 1, perStream: cfg.readers},
		{live: "long-poll", streams: cfg.streams, perStream: 1},
	}
	for _, sh := range shapes {
		b.Run(fmt.Sprintf("%s/streams=%d/readers=%d", sh.live, sh.streams, sh.readers()), func(b *testing.B) {
			for b.Loop() {
				runFanout(b, cfg, sh)
			}
		})
	}
}

// runFanout is one shape on a fresh node: its streams, its readers parked,
// then the appends, and the latencies of every delivery.
func runFanout(b *testing.B, cfg fanoutSettings, sh shape) {
	conns := sh.readers() + 64 // the appenders' and the streams' creation
	checkFileLimit(b, conns)
	n := fanoutNode(b, conns)
	createStreams(b, n.URL, settings{streams: sh.streams})
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns}}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fanout{readers: make([]*reader, sh.readers())}
	var wg sync.WaitGroup
	for i := range f.readers {
		r := &reader{url: fmt.Sprintf("%s/scale/s%08d", n.URL, i/sh.perStream)}
		f.readers[i] = r
		wg.Go(func() { f.read(ctx, client, r, sh.live) })
	}
	parkedIn := f.awaitParked(b, n, sh.readers())

	node0, self0 := processCPU(n.Cmd.Process.Pid), processCPU(os.Getpid())
	acks := appendSteadily(b, client, n.URL, sh.streams, cfg)
	f.awaitDeliveries(b, len(acks)*sh.perStream)
	nodeCPU, selfCPU := processCPU(n.Cmd.Process.Pid)-node0, processCPU(os.Getpid())-self0
	cancel()
	wg.Wait()

	lat := f.latencies(b, acks, sh.perStream)
	p50, p99, worst := quantiles(lat)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(worst), "max-ms")
	b.ReportMetric(float64(len(acks))/cfg.appendFor.Seconds(), "appends/s")
	perDelivery := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(len(lat)) }
	b.ReportMetric(perDelivery(nodeCPU), "node-cpu-ns/delivery")
	b.ReportMetric(perDelivery(selfCPU), "client-cpu-ns/delivery")
	b.Logf("\n| live | streams | readers | appends | deliveries | readers parked in | ack → reader p50 / p99 / max | CPU per delivery: node / readers |\n"+
		"| %s | %d | %d | %d | %d | %.1f s | %.2f / %.2f / %.2f ms | %.1f / %.1f µs |",
		sh.live, sh.streams, sh.readers(), len(acks), len(lat), parkedIn.Seconds(), ms(p50), ms(p99), ms(worst),
		perDelivery(nodeCPU)/1000, perDelivery(selfCPU)/1000)
	stop(b, n)
}

// fanoutNode starts a node that admits conns connections and as many live
// readers, and keeps them parked longer than a run lasts, so that no
// reader is between two requests when a record arrives.
func fanoutNode(b *testing.B, conns int) *picoproc.Process {
	dir := b.TempDir()
	return picoproc.Serve(b, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--meta-url", "sqlite:"+filepath.Join(dir, "meta.db"), "--storage", "file://"+filepath.Join(dir, "objects"),
		"--max-connections", strconv.Itoa(conns), "--max-live-readers", strconv.Itoa(conns),
		"--long-poll-timeout-sec", "600", "--sse-max-duration-sec", "600")
}

// checkFileLimit fails early when this process cannot open conns
// connections: the benchmark raises nothing, and running out of file
// descriptors halfway would read as the node's failure.
func checkFileLimit(b *testing.B, conns int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if uint64(conns)+256 > lim.Cur {
		b.Fatalf("%d connections need more than the open-file limit of %d: lower PICOMQ_FANOUT_READERS or PICOMQ_FANOUT_STREAMS", conns, lim.Cur)
	}
}

// fanout is the readers of one run and what they have seen.
type fanout struct {
	readers   []*reader
	delivered atomic.Int64
	failed    atomic.Value // the first reader's error
}

// reader is one live reader of url; got[seq] is when it had record seq,
// written by its goroutine only and read once that has ended.
type reader struct {
	url string
	got []time.Time
}

// read follows r's stream until ctx ends, asking again whenever a
// response ends, and records when each record arrives.
func (f *fanout) read(ctx context.Context, c *http.Client, r *reader, live string) {
	next := uint64(0)
	for ctx.Err() == nil {
		var err error
		if live == "sse" {
			next, err = f.readEvents(ctx, c, r, next)
		} else {
			next, err = f.longPoll(ctx, c, r, next)
		}
		if err != nil && ctx.Err() == nil {
			f.failed.CompareAndSwap(nil, err)
			return
		}
	}
}

// longPoll is one long-poll from seq next, and returns the seq to ask next.
// The page's records are [next, Pico-Next-Seq): nothing trims the stream, so
// the header says what arrived without decoding the body, which would cost
// the readers, who share the node's cores, more than the node spends.
func (f *fanout) longPoll(ctx context.Context, c *http.Client, r *reader, next uint64) (uint64, error) {
	resp, err := get(ctx, c, fmt.Sprintf("%s?seq=%d&live=long-poll", r.url, next))
	if err != nil {
		return next, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return next, nil
	}
	// The whole body is read: it is when the reader has the records, and
	// the connection is then reused (a new one per poll would count
	// against --max-connections while the old one closes).
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return next, fmt.Errorf("long-poll %s: %w", r.url, err)
	}
	at := time.Now()
	end, err := strconv.ParseUint(resp.Header.Get("Pico-Next-Seq"), 10, 64)
	if err != nil || end < next {
		return next, fmt.Errorf("long-poll %s from %d: Pico-Next-Seq %q", r.url, next, resp.Header.Get("Pico-Next-Seq"))
	}
	for seq := next; seq < end; seq++ {
		f.deliver(r, seq, at)
	}
	return end, nil
}

// readEvents holds one event stream from seq next until it ends, and
// returns the seq to ask next.
func (f *fanout) readEvents(ctx context.Context, c *http.Client, r *reader, next uint64) (uint64, error) {
	resp, err := get(ctx, c, fmt.Sprintf("%s?seq=%d&live=sse", r.url, next))
	if err != nil {
		return next, err
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	id, data := "", false
	for lines.Scan() {
		line := lines.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("event:")):
			data = string(bytes.TrimSpace(line[6:])) == "data"
		case bytes.HasPrefix(line, []byte("id:")):
			id = string(bytes.TrimSpace(line[3:]))
		case len(line) == 0 && data && id != "": // the end of a data event: its id is the next seq
			end, err := strconv.ParseUint(id, 10, 64)
			if err != nil || end < next {
				return next, fmt.Errorf("event stream %s: id %q after seq %d", r.url, id, next)
			}
			at := time.Now()
			for seq := next; seq < end; seq++ {
				f.deliver(r, seq, at)
			}
			next, id, data = end, "", false
		case len(line) == 0:
			id, data = "", false
		}
	}
	return next, nil
}

func get(ctx context.Context, c *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return resp, nil
}

func (f *fanout) deliver(r *reader, seq uint64, at time.Time) {
	for uint64(len(r.got)) <= seq {
		r.got = append(r.got, time.Time{})
	}
	if r.got[seq].IsZero() {
		r.got[seq] = at
		f.delivered.Add(1)
	}
}

// awaitParked returns once the node has want live readers parked, and how
// long that took: an append before then would time a reader's arrival, not
// a delivery.
func (f *fanout) awaitParked(b *testing.B, n *picoproc.Process, want int) time.Duration {
	t0 := time.Now()
	for deadline := t0.Add(5 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		f.checkReaders(b)
		m, err := n.Metrics()
		if err != nil {
			b.Fatal(err)
		}
		if m["pico_live_readers_parked"] >= float64(want) {
			return time.Since(t0)
		}
		if time.Now().After(deadline) {
			b.Fatalf("%.0f of %d readers parked after %v", m["pico_live_readers_parked"], want, time.Since(t0))
		}
	}
}

// awaitDeliveries waits until the readers have had want records in all, or
// fails once they have had nothing new for 30 s.
func (f *fanout) awaitDeliveries(b *testing.B, want int) {
	last, lastAt := f.delivered.Load(), time.Now()
	for ; last < int64(want); time.Sleep(10 * time.Millisecond) {
		f.checkReaders(b)
		if now := f.delivered.Load(); now != last {
			last, lastAt = now, time.Now()
		}
		if time.Since(lastAt) > 30*time.Second {
			b.Fatalf("readers had %d of %d deliveries, nothing new for 30 s", last, want)
		}
	}
}

func (f *fanout) checkReaders(b *testing.B) {
	if err, _ := f.failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// ack is an acknowledged append: the record's stream and seq, and when the
// appender's POST returned.
type ack struct {
	stream int
	seq    uint64
	at     time.Time
}

// appendSteadily appends cfg.rate records a second for cfg.appendFor, each
// to a random stream of streams, without waiting for one append before the
// next, so that a slow acknowledgement does not slow the rate.
func appendSteadily(b *testing.B, c *http.Client, base string, streams int, cfg fanoutSettings) []ack {
	total := cfg.appends()
	var mu sync.Mutex
	acks := make([]ack, 0, total)
	var failed atomic.Value
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(cfg.rate))
	defer tick.Stop()
	for i := range total {
		<-tick.C
		wg.Go(func() {
			s := rand.IntN(streams)
			h, err := exchange(c, http.MethodPost, fmt.Sprintf("%s/scale/s%08d", base, s), []byte(strconv.Itoa(i)), http.StatusOK)
			at := time.Now()
			if err != nil {
				failed.Store(err)
				return
			}
			seq, err := strconv.ParseUint(h.Get("Pico-Start-Seq"), 10, 64)
			if err != nil {
				failed.Store(fmt.Errorf("append: Pico-Start-Seq %q", h.Get("Pico-Start-Seq")))
				return
			}
			mu.Lock()
			acks = append(acks, ack{stream: s, seq: seq, at: at})
			mu.Unlock()
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return acks
}

// latencies is, for every ack and every reader of its stream, how long
// after the ack the reader had the record (negative when it had the record
// first). A reader that missed a record fails the run.
func (f *fanout) latencies(b *testing.B, acks []ack, perStream int) []time.Duration {
	lat := make([]time.Duration, 0, len(acks)*perStream)
	missed := 0
	for _, a := range acks {
		for _, r := range f.readers[a.stream*perStream : (a.stream+1)*perStream] {
			if a.seq >= uint64(len(r.got)) || r.got[a.seq].IsZero() {
				missed++
				continue
			}
			lat = append(lat, r.got[a.seq].Sub(a.at))
		}
	}
	if missed > 0 {
		b.Fatalf("%d of %d deliveries missed", missed, len(acks)*perStream)
	}
	return lat
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// processCPU is the CPU time (user and system) process pid has used, from
// /proc; 0 where there is none. The benchmark and the node share the
// machine's cores, so each one's share of a delivery says which of them a
// figure measures.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields counted from its end are utime (14) and stime (15).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseUint(fields[11], 10, 64)
	stime, _ := strconv.ParseUint(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is the unit of /proc's CPU times (USER_HZ), 100 on Linux.
const clockTicks = 100
