package picobench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picohttp"
	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/tests/closedloop"
	"github.com/picomq/pico/tests/s3fault"
)

// cloudServer is a node on versitygw behind a proxy with profile's latency,
// its WAL tuned by walCfg, behind the Pico listener on loopback TCP.
func cloudServer(b *testing.B, storeURL string, walCfg wal.Config) (*server, *node.Node) {
	n, _ := startNodeOn(b, storeURL, walCfg)
	srv := httptest.NewServer(picohttp.New(picohttp.Config{Streams: n.Streams(), LongPollTimeout: 25 * time.Second}))
	b.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 2048}
	return &server{url: srv.URL, client: &http.Client{Transport: tr}}, n
}

// BenchmarkCloudFanInHTTP is the fan-in users compare with S2: 100 streams
// of 10 appenders each over HTTP (one 1 KiB record a request, each
// appender waiting for its acknowledgement), on a store with S3 Standard's
// or S3 Express's latency, with the WAL's pipelining off (1) and at its
// default (4): appends/s, p50/p99 ms, records per WAL PUT and WAL PUTs/s.
func BenchmarkCloudFanInHTTP(b *testing.B) {
	const streams, perStream = 100, 10
	for _, p := range s3fault.Profiles {
		for _, pipeline := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/pipeline=%d", p.Name, pipeline), func(b *testing.B) {
				s, n := cloudServer(b, s3fault.CloudURL(b, p.Latency), wal.Config{Pipeline: pipeline})
				for i := range streams {
					s.create(b, fmt.Sprintf("/fan/%d", i))
				}
				body := make([]byte, 1024)
				before, cpuBefore := n.Stats(), processCPU()
				lat, elapsed := closedloop.Run(b, streams*perStream, closedloop.Count(b.N), func(a int) error {
					return s.request(http.MethodPost, fmt.Sprintf("/fan/%d", a%streams), "application/octet-stream", body, http.StatusOK)
				})
				after := n.Stats()
				puts := after.WALPuts - before.WALPuts
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
				b.ReportMetric(float64(after.WALSubmissions-before.WALSubmissions)/float64(puts), "records/put")
				b.ReportMetric(float64(puts)/elapsed.Seconds(), "puts/s")
				b.ReportMetric(float64((after.WALPutTime-before.WALPutTime).Milliseconds())/float64(puts), "put-mean-ms")
				// This process is the node and its clients: near the
				// machine's cores, the figures are the machine's limit.
				b.ReportMetric((processCPU()-cpuBefore).Seconds()/elapsed.Seconds(), "cpu-cores")
				closedloop.ReportMs(b, "append", lat)
			})
		}
	}
}

// BenchmarkCloudLoneAppendHTTP sets one 1 KiB append at a time over HTTP
// beside one raw 1 KiB PUT at a time through the same latency proxy,
// alternating: p50/p99 ms of each and the ratio of the medians.
func BenchmarkCloudLoneAppendHTTP(b *testing.B) {
	for _, p := range s3fault.Profiles {
		b.Run(p.Name, func(b *testing.B) {
			storeURL := s3fault.CloudURL(b, p.Latency)
			s, _ := cloudServer(b, storeURL, wal.Config{})
			raw, err := s3store.Open(context.Background(), storeURL)
			if err != nil {
				b.Fatal(err)
			}
			s.create(b, "/lone")
			body := make([]byte, 1024)
			puts := make([]time.Duration, 0, b.N)
			appends := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				if err := raw.PutIfAbsent(context.Background(), fmt.Sprintf("raw/%d", i), body); err != nil {
					b.Fatal(err)
				}
				puts = append(puts, time.Since(t0))
				t0 = time.Now()
				s.do(b, http.MethodPost, "/lone", "application/octet-stream", body, http.StatusOK)
				appends = append(appends, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(puts)
			slices.Sort(appends)
			b.ReportMetric(float64(appends[len(appends)/2])/float64(puts[len(puts)/2]), "append/put-p50")
			closedloop.ReportMs(b, "put", puts)
			closedloop.ReportMs(b, "append", appends)
		})
	}
}
