package scale

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/picomq/pico/tests/picoproc"
)

// settings come from the environment: PICOMQ_SCALE_STREAMS (default
// 100,000), PICOMQ_SCALE_WITH_RECORDS (the share holding one record,
// default 0.1), PICOMQ_SCALE_SETTLE (the wait after the creates, for the
// uploads, snapshot, truncation and idle releases they cause, default 90s:
// streams leave memory 30 to 60 s after their last use) and
// PICOMQ_SCALE_IDLE (how long to watch the idle node, default 60s: the
// lease holder's maintenance passes run once a minute).
type settings struct {
	streams      int
	withRecords  float64
	settle, idle time.Duration
}

func settingsFromEnv(b *testing.B) settings {
	return settings{
		streams:     envCount(b, "PICOMQ_SCALE_STREAMS", 100_000),
		withRecords: envShare(b, "PICOMQ_SCALE_WITH_RECORDS", 0.1),
		settle:      envDuration(b, "PICOMQ_SCALE_SETTLE", 90*time.Second),
		idle:        envDuration(b, "PICOMQ_SCALE_IDLE", time.Minute),
	}
}

// envCount is the count in the variable name, or def when it is unset.
func envCount(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// envShare is the share from 0 to 1 in the variable name, or def when it
// is unset.
func envShare(b *testing.B, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		b.Fatalf("%s=%q: want a share from 0 to 1", name, v)
	}
	return f
}

// envDuration is the duration in the variable name, or def when it is
// unset.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}

// BenchmarkScale is one run at the configured size; b.N is ignored (use
// -benchtime 1x). Figures are reported as metrics and logged as a table.
func BenchmarkScale(b *testing.B) {
	cfg := settingsFromEnv(b)
	dir := b.TempDir()
	data := []string{"--meta-url", "sqlite:" + filepath.Join(dir, "meta.db"), "--storage", "file://" + filepath.Join(dir, "objects")}
	for b.Loop() {
		n := picoproc.Serve(b, append([]string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, data...)...)
		baseline := rssBytes(b, n)
		createdIn := createStreams(b, n.URL, cfg)
		time.Sleep(cfg.settle)
		idleCPU, storeRequests := watchIdle(b, n, cfg.idle)
		perStream := float64(rssBytes(b, n)-baseline) / float64(cfg.streams)
		heap := heapFigures(b, n)

		stopTook := stop(b, n)
		t0 := time.Now()
		n = picoproc.Serve(b, append([]string{"--listen", strings.TrimPrefix(n.URL, "http://"),
			"--admin-listen", strings.TrimPrefix(n.AdminURL, "http://")}, data...)...)
		ready := time.Since(t0)
		p50, p99 := firstReads(b, n.URL, cfg.streams, 1000)
		restartedPerStream := float64(rssBytes(b, n)-baseline) / float64(cfg.streams)

		b.ReportMetric(float64(cfg.streams)/createdIn.Seconds(), "creates/s")
		b.ReportMetric(perStream, "RSS-B/stream")
		b.ReportMetric(idleCPU*100, "idle-%core")
		b.ReportMetric(storeRequests, "idle-store-requests")
		b.ReportMetric(ready.Seconds(), "restart-to-ready-s")
		b.ReportMetric(p50.Seconds()*1000, "first-read-p50-ms")
		b.ReportMetric(p99.Seconds()*1000, "first-read-p99-ms")
		b.ReportMetric(stopTook.Seconds(), "SIGTERM-s")
		b.ReportMetric(float64(unavailable.Load()), "503s-waited")
		b.ReportMetric(heap["go_memstats_heap_inuse_bytes"]/float64(cfg.streams), "heap-inuse-B/stream")
		b.ReportMetric(heap["go_memstats_next_gc_bytes"]/float64(cfg.streams), "heap-goal-B/stream")
		b.ReportMetric(heap["go_memstats_heap_released_bytes"]/float64(cfg.streams), "heap-released-B/stream")
		b.Logf("\n| streams | creates/s | RSS per stream | idle CPU | store requests idle | restart to /ready | first read p50 / p99 | RSS per stream after restart | SIGTERM |\n"+
			"| %d | %.0f | %.0f B | %.2f%% | %.0f | %.2f s | %.2f / %.2f ms | %.0f B | %.2f s |",
			cfg.streams, float64(cfg.streams)/createdIn.Seconds(), perStream, idleCPU*100, storeRequests,
			ready.Seconds(), p50.Seconds()*1000, p99.Seconds()*1000, restartedPerStream, stopTook.Seconds())
		stop(b, n)
	}
}

// createStreams creates cfg.streams streams over HTTP from 32 connections,
// appending one record to the given share, and returns how long it took.
func createStreams(b *testing.B, base string, cfg settings) time.Duration {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	every := 0
	if cfg.withRecords > 0 {
		every = int(1 / cfg.withRecords)
	}
	t0 := time.Now()
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < cfg.streams && failed.Load() == nil; i = int(next.Add(1)) - 1 {
				u := fmt.Sprintf("%s/scale/s%08d", base, i)
				if err := send(client, http.MethodPut, u, nil, http.StatusCreated); err != nil {
					failed.Store(err)
					return
				}
				if every > 0 && i%every == 0 {
					if err := send(client, http.MethodPost, u, []byte("hello"), http.StatusOK); err != nil {
						failed.Store(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// unavailable counts the 503s the run met and waited out.
var unavailable atomic.Int64

// send makes one request, as a client would: a 503 (the node overloaded or
// not sure of its tenure) is retried after its Retry-After, up to a
// minute; any other answer but want fails. A 503 leaves the outcome
// unknown, so a create retried after one may find its own stream (200).
func send(c *http.Client, method, u string, body []byte, want int) error {
	_, err := exchange(c, method, u, body, want)
	return err
}

// exchange is send for a caller that reads the response's headers.
func exchange(c *http.Client, method, u string, body []byte, want int) (http.Header, error) {
	for deadline, retried := time.Now().Add(time.Minute), false; ; retried = true {
		req, err := http.NewRequest(method, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "text/plain")
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == want,
			retried && want == http.StatusCreated && resp.StatusCode == http.StatusOK:
			return resp.Header, nil
		case resp.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline):
			unavailable.Add(1)
			time.Sleep(time.Second)
		default:
			return nil, fmt.Errorf("%s %s: %s, want %d", method, u, resp.Status, want)
		}
	}
}

// watchIdle returns the share of a core the node used over d, and the
// object-store requests it made meanwhile (from its own counters).
func watchIdle(b *testing.B, n *picoproc.Process, d time.Duration) (cpu, requests float64) {
	t0, r0 := cpuSeconds(b, n), storeRequests(b, n)
	start := time.Now()
	time.Sleep(d)
	return (cpuSeconds(b, n) - t0) / time.Since(start).Seconds(), storeRequests(b, n) - r0
}

// cpuSeconds is the process's user and system time (Linux /proc).
func cpuSeconds(b *testing.B, n *picoproc.Process) float64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.Cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th of them, in clock ticks (100 a second).
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}

func rssBytes(b *testing.B, n *picoproc.Process) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.Cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// storeRequests sums pico_object_store_requests_total over its labels.
func storeRequests(b *testing.B, n *picoproc.Process) float64 {
	sum := 0.0
	for _, m := range metrics(b, n)["pico_object_store_requests_total"].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// heapFigures are the node's Go heap gauges, which tell live data from
// the collector's headroom in its RSS.
func heapFigures(b *testing.B, n *picoproc.Process) map[string]float64 {
	figures := map[string]float64{}
	for name, f := range metrics(b, n) {
		if strings.HasPrefix(name, "go_memstats_") && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetGauge() != nil {
			figures[name] = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return figures
}

// metrics reads the node's /metrics.
func metrics(b *testing.B, n *picoproc.Process) map[string]*dto.MetricFamily {
	resp, err := http.Get(n.AdminURL + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return families
}

// stop sends SIGTERM and returns how long the node took to exit.
func stop(b *testing.B, n *picoproc.Process) time.Duration {
	t0 := time.Now()
	if code := n.Stop(b, syscall.SIGTERM); code != 0 {
		b.Fatalf("pico serve exited %d after SIGTERM", code)
	}
	took := time.Since(t0)
	for _, line := range strings.Split(n.Stderr.String(), "\n") {
		if strings.Contains(line, "handed back") || strings.Contains(line, "node closed") {
			b.Log(line) // where the stop's time went
		}
	}
	return took
}

// firstReads reads sample random streams once each, the first request for
// each since the restart, and returns the p50 and p99 latencies.
func firstReads(b *testing.B, base string, streams, sample int) (p50, p99 time.Duration) {
	client := &http.Client{Timeout: 30 * time.Second}
	var took []time.Duration
	for _, i := range rand.Perm(streams)[:min(sample, streams)] {
		t0 := time.Now()
		if err := send(client, http.MethodGet, fmt.Sprintf("%s/scale/s%08d?seq=0", base, i), nil, http.StatusOK); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	p50, p99, _ = quantiles(took)
	return p50, p99
}

// quantiles sorts d and returns its median, 99th percentile and maximum.
func quantiles(d []time.Duration) (p50, p99, highest time.Duration) {
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100], d[len(d)-1]
}
