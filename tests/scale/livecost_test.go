package scale

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/adapters/httpguard"
	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/adapters/picohttp"
	"github.com/picomq/pico/adapters/prommetrics"
	"github.com/picomq/pico/app/node"
)

// BenchmarkLiveDeliveryCost is what the server spends to hand one record to
// one live reader of a stream many read: a node in this process (metadata
// and objects in memory) behind each protocol's handler and the metrics
// wrappers of `pico serve`, with readers that call the handler directly and
// keep what it writes in memory, so no socket is involved. Each op appends
// one record and waits until every reader has it; cpu-ns/delivery is the
// process's CPU time (user and system, garbage collection included) over
// the deliveries, allocs/delivery and B/delivery likewise.
func BenchmarkLiveDeliveryCost(b *testing.B) {
	for _, proto := range []string{"pico", "ds"} {
		for _, live := range []string{"sse", "long-poll"} {
			for _, readers := range []int{1, 1000} {
				b.Run(fmt.Sprintf("%s/%s/readers=%d", proto, live, readers), func(b *testing.B) {
					runDeliveryCost(b, proto, live, readers)
				})
			}
		}
	}
}

func runDeliveryCost(b *testing.B, proto, live string, readers int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := memlog.New()
	n, err := node.Start(ctx, node.Config{ID: 1, Address: "http://bench", Slots: 1, Log: log, Lease: log.Lease(), Store: memstore.New(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	metrics := prommetrics.New()
	streams := metrics.Streams(n.Streams())
	parking := httpguard.NewLiveReaders(0)
	var h http.Handler
	if proto == "ds" {
		h = dshttp.New(dshttp.Config{Streams: streams, LongPollTimeout: time.Hour, SSEMaxDuration: time.Hour, LiveReaders: parking})
	} else {
		h = picohttp.New(picohttp.Config{Streams: streams, LongPollTimeout: time.Hour, SSEMaxDuration: time.Hour, LiveReaders: parking})
	}
	h = metrics.Handler(prommetrics.ProtocolPico, h)
	const name = "/cost/s"
	if rec := serve(h, http.MethodPut, name, nil, "text/plain"); rec.Code != http.StatusCreated {
		b.Fatalf("create: %d %s", rec.Code, rec.Body)
	}

	c := &costReaders{want: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			if live == "sse" {
				c.readEvents(ctx, h, proto, name)
			} else {
				c.longPoll(ctx, h, proto, name)
			}
		})
	}
	for parking.Parked() < int64(readers) {
		time.Sleep(time.Millisecond)
	}

	appendOne := func(i int) {
		c.target.Store(int64(i+1) * int64(readers))
		if rec := serve(h, http.MethodPost, name, []byte(strconv.Itoa(i)), "text/plain"); rec.Code/100 != 2 {
			b.Fatalf("append: %d %s", rec.Code, rec.Body)
		}
		select {
		case <-c.want:
		case <-time.After(30 * time.Second):
			b.Fatalf("readers had %d of %d deliveries", c.delivered.Load(), c.target.Load())
		}
	}
	appendOne(0) // the first wake of each reader sets up what later ones reuse
	for parking.Parked() < int64(readers) {
		time.Sleep(time.Millisecond)
	}

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		appendOne(i + 1)
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	runtime.ReadMemStats(&m1)
	deliveries := float64(b.N) * float64(readers)
	b.ReportMetric(float64(cpu.Nanoseconds())/deliveries, "cpu-ns/delivery")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/deliveries, "allocs/delivery")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/deliveries, "B/delivery")
	cancel()
	wg.Wait()
}

func serve(h http.Handler, method, target string, body []byte, contentType string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costReaders counts the deliveries to all readers and signals want when
// they reach target.
type costReaders struct {
	delivered atomic.Int64
	target    atomic.Int64
	want      chan struct{}
}

func (c *costReaders) deliver(k int64) {
	if k > 0 && c.delivered.Add(k) == c.target.Load() {
		c.want <- struct{}{}
	}
}

// readEvents holds one event stream and counts its data events.
func (c *costReaders) readEvents(ctx context.Context, h http.Handler, proto, name string) {
	q, marker := "?seq=0&live=sse", picoRecord
	if proto == "ds" {
		q, marker = "?offset=-1&live=sse", dataEvent
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, name+q, nil)
	h.ServeHTTP(&eventSink{header: http.Header{}, c: c, marker: marker}, req)
}

// eventSink is an event stream's response writer: it counts the records
// written to it by a marker each one carries.
type eventSink struct {
	header http.Header
	c      *costReaders
	marker []byte
}

// A Durable Streams data event holds one record in this benchmark; a Pico
// one holds the records of a read, each a JSON object starting with its seq.
var (
	dataEvent  = []byte("event: data")
	picoRecord = []byte(`{"seq":`)
)

func (w *eventSink) Header() http.Header { return w.header }
func (w *eventSink) WriteHeader(int)     {}
func (w *eventSink) Flush()              {}
func (w *eventSink) Write(p []byte) (int, error) {
	w.c.deliver(int64(bytes.Count(p, w.marker)))
	return len(p), nil
}

// longPoll polls from the tail on, counting the records of each answer by
// its next-offset header.
func (c *costReaders) longPoll(ctx context.Context, h http.Handler, proto, name string) {
	next := uint64(0)
	for ctx.Err() == nil {
		var target string
		if proto == "ds" {
			target = fmt.Sprintf("%s?offset=%016d_%016d&live=long-poll", name, 0, next)
		} else {
			target = fmt.Sprintf("%s?seq=%d&live=long-poll", name, next)
		}
		// As the server would have parsed it, without the parse: the
		// figures are the server's.
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		req.RequestURI = target
		w := &pollSink{header: http.Header{}}
		h.ServeHTTP(w, req)
		var got uint64
		var err error
		if proto == "ds" {
			v := w.header.Get("Stream-Next-Offset")
			if len(v) == 33 {
				got, err = strconv.ParseUint(v[17:], 10, 64)
			}
		} else {
			got, err = strconv.ParseUint(w.header.Get("Pico-Next-Seq"), 10, 64)
		}
		if err != nil || got < next {
			continue
		}
		c.deliver(int64(got - next))
		next = got
	}
}

// pollSink is a long-poll's response writer: the headers are all the
// benchmark looks at.
type pollSink struct {
	header http.Header
}

func (w *pollSink) Header() http.Header         { return w.header }
func (w *pollSink) WriteHeader(int)             {}
func (w *pollSink) Write(p []byte) (int, error) { return len(p), nil }
