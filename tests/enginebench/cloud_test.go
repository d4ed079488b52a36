package enginebench

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/s3fault"
	"github.com/picomq/pico/tests/s3test"
)

// cloudStore is a bucket on versitygw reached through a proxy that adds
// the latency of profile to every request.
func cloudStore(b *testing.B, profile s3fault.Latency) ports.ObjectStore {
	u, err := url.Parse(s3test.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	proxy, err := s3fault.Start(q.Get("endpoint"), 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { proxy.Close() })
	proxy.Set(s3fault.Faults{Latency: profile})
	q.Set("endpoint", proxy.URL)
	u.RawQuery = q.Encode()
	store, err := s3store.Open(context.Background(), u.String())
	if err != nil {
		b.Fatal(err)
	}
	return store
}

var cloudProfiles = []struct {
	name    string
	latency s3fault.Latency
}{{"s3-standard", s3fault.S3Standard}, {"s3-express", s3fault.S3Express}}

// BenchmarkCloudLoneAppend is BenchmarkLoneAppend on stores with a cloud
// store's latency: one 1 KiB append at a time against one raw 1 KiB PUT
// at a time through the same proxy, alternating.
func BenchmarkCloudLoneAppend(b *testing.B) {
	for _, p := range cloudProfiles {
		b.Run(p.name, func(b *testing.B) {
			body := make([]byte, 1024)
			store := cloudStore(b, p.latency)
			n := startNode(b, store, 1)
			run := runs.Add(1)
			raw := make([]time.Duration, 0, b.N)
			appends := make([]time.Duration, 0, b.N)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if err := store.PutIfAbsent(ctx, fmt.Sprintf("raw/%d/%d", run, i), body); err != nil {
					b.Fatal(err)
				}
				raw = append(raw, time.Since(start))
				start = time.Now()
				if _, err := n.streams[0].Append(ctx, ports.AppendRequest{Records: []domain.Record{{Body: body}}}); err != nil {
					b.Fatal(err)
				}
				appends = append(appends, time.Since(start))
			}
			b.StopTimer()
			reportQuantiles(b, "raw-put", raw)
			reportQuantiles(b, "append", appends)
			b.ReportMetric(float64(p50(appends))/float64(p50(raw)), "append/raw-p50")
			b.ReportMetric(float64(n.wal.Stats().Puts)/float64(b.N), "puts/append")
		})
	}
}

// BenchmarkCloudFanIn runs 100 streams of 10 appenders each (1 KiB
// records, each appender waiting for its acknowledgement) on stores with
// a cloud store's latency: appends/s, latency, and records per PUT.
func BenchmarkCloudFanIn(b *testing.B) {
	const streams, perStream = 100, 10
	for _, p := range cloudProfiles {
		b.Run(p.name, func(b *testing.B) {
			body := make([]byte, 1024)
			n := startNode(b, cloudStore(b, p.latency), streams)
			var next atomic.Int64
			lats := make([][]time.Duration, streams*perStream)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for a := range streams * perStream {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						if _, err := n.streams[a%streams].Append(context.Background(), ports.AppendRequest{Records: []domain.Record{{Body: body}}}); err != nil {
							b.Error(err)
							return
						}
						lats[a] = append(lats[a], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			stats := n.wal.Stats()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
			b.ReportMetric(float64(stats.Submissions)/float64(stats.Puts), "records/put")
			b.ReportMetric(float64(stats.Puts)/elapsed.Seconds(), "puts/s")
			reportQuantiles(b, "append", slices.Concat(lats...))
		})
	}
}

// reportQuantiles reports the p50 and p99 of lat in ms, named what.
func reportQuantiles(b *testing.B, what string, lat []time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(q(0.50), what+"-p50-ms")
	b.ReportMetric(q(0.99), what+"-p99-ms")
}
