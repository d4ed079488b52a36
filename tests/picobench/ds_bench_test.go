package picobench

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/tests/closedloop"
)

// BenchmarkDSAppends posts 1 KiB Durable Streams appends from 64 concurrent
// appenders, each on its own stream, to an in-process node on versitygw:
// the server side of the comparison with the reference server, here so it
// can be profiled (-cpuprofile). Besides appends/s and latency it reports
// the objects written per append and this process's CPU per append.
func BenchmarkDSAppends(b *testing.B) {
	const appenders = 64
	n, puts := startNode(b)
	srv := httptest.NewServer(dshttp.New(dshttp.Config{Streams: n.Streams()}))
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: appenders}}
	b.Cleanup(client.CloseIdleConnections)
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
	putsBefore, cpuBefore := puts.Load(), processCPU()
	lat, elapsed := closedloop.Run(b, appenders, closedloop.Count(b.N), func(w int) error {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/v1/stream/%d", srv.URL, w), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("append: %s", resp.Status)
		}
		return nil
	})
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
	// CPU per append, of this process (server and client both): steadier
	// than throughput on a shared machine.
	b.ReportMetric(float64((processCPU()-cpuBefore).Microseconds())/float64(b.N), "cpu-µs/append")
	b.ReportMetric(float64(b.N)/float64(puts.Load()-putsBefore), "appends/put")
	report(b, lat)
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
