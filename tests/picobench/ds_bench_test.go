package picobench

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/dshttp"
)

// BenchmarkDSAppends posts 1 KiB Durable Streams appends from 64 concurrent
// appenders, each on its own stream, to an in-process node on versitygw:
// the server side of the comparison with the reference server, here so it
// can be profiled (-cpuprofile).
func BenchmarkDSAppends(b *testing.B) {
	n := startNode(b)
	srv := httptest.NewServer(dshttp.New(dshttp.Config{Streams: n.Streams()}))
	b.Cleanup(srv.Close)
	const appenders = 64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: appenders}}
	body := bytes.Repeat([]byte("x"), 1024)
	for w := range appenders {
		req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/v1/stream/%d", srv.URL, w), nil)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatalf("create: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	var next atomic.Int64
	lat := make([][]time.Duration, appenders)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/v1/stream/%d", srv.URL, w), bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/octet-stream")
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != http.StatusNoContent {
					b.Errorf("append: %v %v", resp, err)
					return
				}
				resp.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
	all := slices.Concat(lat...)
	report(b, all)
}
