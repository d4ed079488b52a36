// Package picobench measures the Pico protocol over real HTTP on a node
// whose objects live on a real S3 server (versitygw): live delivery latency
// from an append's acknowledgement to a long-poll or SSE reader, and append
// throughput with JSON batches. BenchmarkDSAppendPath sets pico's append
// path beside the floor's (package floor) in one process.
package picobench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/picohttp"
	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/closedloop"
	"github.com/picomq/pico/tests/s3test"
)

// server is a node on versitygw behind the Pico listener on loopback TCP.
type server struct {
	url    string
	client *http.Client
}

func startServer(b *testing.B) *server {
	n, _ := startNode(b)
	srv := httptest.NewServer(picohttp.New(picohttp.Config{Streams: n.Streams(), LongPollTimeout: 25 * time.Second}))
	b.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0}
	return &server{url: srv.URL, client: &http.Client{Transport: tr}}
}

// startNode runs a node whose objects live in a fresh versitygw bucket, and
// returns it with a count of the objects it has written.
func startNode(b *testing.B) (*node.Node, *atomic.Int64) {
	return startNodeOn(b, s3test.URL(b), wal.Config{})
}

// startNodeOn is startNode on the store at storeURL, with the WAL tuned by
// walCfg.
func startNodeOn(b *testing.B, storeURL string, walCfg wal.Config) (*node.Node, *atomic.Int64) {
	ctx := context.Background()
	s3, err := s3store.Open(ctx, storeURL)
	if err != nil {
		b.Fatal(err)
	}
	store := &countingStore{ObjectStore: s3}
	log := memlog.New()
	n, err := node.Start(ctx, node.Config{ID: 1, Address: "http://bench", Slots: 1, Log: log, Lease: log.Lease(), Store: store, WAL: walCfg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	return n, &store.puts
}

// countingStore counts the objects written through it.
type countingStore struct {
	ports.ObjectStore
	puts atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, key string, body []byte) error {
	s.puts.Add(1)
	return s.ObjectStore.Put(ctx, key, body)
}

func (s *countingStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	s.puts.Add(1)
	return s.ObjectStore.PutIfAbsent(ctx, key, body)
}

func (s *server) do(b *testing.B, method, path, ct string, body []byte, want int) {
	if err := s.request(method, path, ct, body, want); err != nil {
		b.Fatal(err)
	}
}

// request is do for goroutines other than the benchmark's own.
func (s *server) request(method, path, ct string, body []byte, want int) error {
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d", method, path, resp.StatusCode, want)
	}
	return nil
}

func (s *server) create(b *testing.B, name string) {
	s.do(b, http.MethodPut, name, "application/octet-stream", nil, http.StatusCreated)
}

func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// BenchmarkLiveDelivery appends one record at a time and measures how long
// after the append's acknowledgement a parked reader has it. Negative
// figures mean the reader had it before the writer had its ack.
func BenchmarkLiveDelivery(b *testing.B) {
	for _, mode := range []string{"long-poll", "sse"} {
		b.Run(mode, func(b *testing.B) {
			s := startServer(b)
			name := "/live/" + mode
			s.create(b, name)
			got := make(chan time.Time, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if mode == "sse" {
				go s.readSSE(ctx, name, got)
			} else {
				go s.longPoll(ctx, name, got)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				s.do(b, http.MethodPost, name, "text/plain", []byte(strconv.Itoa(i)), http.StatusOK)
				acked := time.Now()
				select {
				case at := <-got:
					lat = append(lat, at.Sub(acked))
				case <-time.After(10 * time.Second):
					b.Fatalf("record %d never reached the %s reader", i, mode)
				}
			}
			b.StopTimer()
			report(b, lat)
		})
	}
}

// longPoll reads the stream with long-polls, reporting when each record
// arrives.
func (s *server) longPoll(ctx context.Context, name string, got chan<- time.Time) {
	seq := 0
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s%s?seq=%d&live=long-poll", s.url, name, seq), nil)
		resp, err := s.client.Do(req)
		if err != nil {
			return
		}
		var recs []json.RawMessage
		json.NewDecoder(resp.Body).Decode(&recs)
		resp.Body.Close()
		now := time.Now()
		for range recs {
			got <- now
		}
		seq += len(recs)
	}
}

// readSSE holds one SSE response, reporting when each data event arrives.
func (s *server) readSSE(ctx context.Context, name string, got chan<- time.Time) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+name+"?seq=0&live=sse", nil)
	resp, err := s.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: data") {
			got <- time.Now()
		}
	}
}

// BenchmarkAppendJSONBatch posts JSON batches of 100 records of 1 KiB from
// concurrent writers, each to its own stream, durable on versitygw.
func BenchmarkAppendJSONBatch(b *testing.B) {
	for _, writers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := startServer(b)
			body := jsonBatch(100, 1024)
			for w := range writers {
				s.create(b, fmt.Sprintf("/batch/%d", w))
			}
			lat, elapsed := closedloop.Run(b, writers, closedloop.Count(b.N), func(w int) error {
				return s.request(http.MethodPost, fmt.Sprintf("/batch/%d", w), "application/vnd.picomq.batch+json", body, http.StatusOK)
			})
			b.ReportMetric(float64(b.N*100)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(b.N*100*1024)/elapsed.Seconds()/(1<<20), "MiB/s")
			report(b, lat)
		})
	}
}

func jsonBatch(n, size int) []byte {
	type rec struct {
		Body string `json:"body"`
	}
	recs := make([]rec, n)
	for i := range recs {
		recs[i].Body = strings.Repeat("x", size)
	}
	out, _ := json.Marshal(map[string]any{"records": recs})
	return out
}
