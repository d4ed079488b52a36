package picobench

import (
	"bytes"
	"context"
	"io"
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

	"github.com/picomq/pico/adapters/picoclient"
	"github.com/picomq/pico/tests/closedloop"
	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3test"
)

// BenchmarkReadCrowding is the read-crowding scenario: pico serve on
// versitygw holds one stream of PICO_BENCH_MIB (200) MiB of 1 KiB records;
// after a restart (cold caches) each case runs PICO_BENCH_SECONDS (10):
// 16 closed-loop appenders of one 1 KiB record on streams of their own,
// 4 readers catching up on the big stream from offset 0 as fast as they
// can (binary pages of up to 1 MiB, starting over at the end), or both;
// with catch-up reads given no priority (--catchup-share 1) and at shares
// 0.5 and 0.45 (the default), or at the shares in PICO_BENCH_SHARES
// (space-separated).
// It reports the appends' p50/p99 and appends/s, the readers' MiB/s and
// the node's garbage collections and block-cache misses. Extra flags for
// pico serve come from PICO_BENCH_SERVE_FLAGS (space-separated). Run it
// with -benchtime 1x.
func BenchmarkReadCrowding(b *testing.B) {
	seconds, mib := envInt("PICO_BENCH_SECONDS", 10), envInt("PICO_BENCH_MIB", 200)
	dir, store := b.TempDir(), s3test.URL(b)
	args := append([]string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--meta-url", "sqlite:" + filepath.Join(dir, "meta.db"), "--storage", store}, serveFlags()...)
	n := picoproc.Serve(b, args...)
	client := picoclient.New(n.URL, picoclient.Options{})
	for w := range 16 {
		create(b, client, "crowd/a"+strconv.Itoa(w))
	}
	create(b, client, "crowd/big")
	fill(b, client, "crowd/big", mib)
	n.Stop(b, syscall.SIGTERM)
	for _, share := range shares() {
		for _, c := range []struct {
			name             string
			appends, readers bool
		}{{"appends", true, false}, {"readers", false, true}, {"appends+readers", true, true}} {
			b.Run("catchup-share="+share+"/"+c.name, func(b *testing.B) {
				crowd(b, append(args, "--catchup-share", share), time.Duration(seconds)*time.Second, c.appends, c.readers)
			})
		}
	}
}

// crowd runs one case of BenchmarkReadCrowding on a node started with args.
func crowd(b *testing.B, args []string, d time.Duration, appends, readers bool) {
	n := picoproc.Serve(b, args...)
	defer n.Stop(b, syscall.SIGTERM)
	m0 := metrics(b, n)
	ctx, cancel := context.WithCancel(context.Background())
	var read atomic.Int64
	var wg sync.WaitGroup
	if readers {
		for range 4 {
			wg.Go(func() { catchUp(ctx, b, n.URL+"/crowd/big", &read) })
		}
	}
	start := time.Now()
	if appends {
		client := picoclient.New(n.URL, picoclient.Options{})
		body := bytes.Repeat([]byte("a"), 1024)
		lat, elapsed := closedloop.Run(b, 16, closedloop.For(d), func(w int) error {
			_, err := client.Append(context.Background(), "crowd/a"+strconv.Itoa(w), []picoclient.Record{{Body: body}}, picoclient.AppendOptions{})
			return err
		})
		closedloop.ReportMs(b, "append", lat)
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "appends/s")
	} else {
		b.ResetTimer()
		time.Sleep(d)
		b.StopTimer()
	}
	cancel()
	wg.Wait()
	if readers {
		b.ReportMetric(float64(read.Load())/(1<<20)/time.Since(start).Seconds(), "read-MiB/s")
	}
	m1 := metrics(b, n)
	b.ReportMetric(m1[gcs]-m0[gcs], "gcs")
	b.ReportMetric(m1[cacheMisses]-m0[cacheMisses], "cache-misses")
}

// The node's metrics crowd reports: garbage collections and block-cache
// misses (each one object-store GET).
const (
	gcs         = "go_gc_duration_seconds_count"
	cacheMisses = `pico_cache_requests_total{cache="block",result="miss"}`
)

func create(b *testing.B, c *picoclient.Client, name string) {
	if _, err := c.Create(context.Background(), name, picoclient.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// fill appends mib MiB of 1 KiB records to name, 1,024 a request.
func fill(b *testing.B, c *picoclient.Client, name string, mib int) {
	recs := make([]picoclient.Record, 1024)
	for i := range recs {
		recs[i].Body = bytes.Repeat([]byte{byte('a' + i%26)}, 1024)
	}
	for range mib {
		if _, err := c.Append(context.Background(), name, recs, picoclient.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// catchUp reads url from offset 0 to its end, again and again, until ctx
// ends, adding the bytes it gets to read.
func catchUp(ctx context.Context, b *testing.B, url string, read *atomic.Int64) {
	seq := "0"
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"?format=binary&bytes=1048576&seq="+seq, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				b.Error(err)
			}
			return
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			if ctx.Err() == nil {
				b.Errorf("read at %s: %d %v", seq, resp.StatusCode, err)
			}
			return
		}
		read.Add(n)
		if seq = resp.Header.Get("Pico-Next-Seq"); resp.Header.Get("Pico-Up-To-Date") == "true" {
			seq = "0"
		}
	}
}

// metrics scrapes the node's /metrics.
func metrics(b *testing.B, n *picoproc.Process) map[string]float64 {
	m, err := n.Metrics()
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// shares are the --catchup-share values crowd runs at: PICO_BENCH_SHARES
// (space-separated), or no priority, 0.5 and the default 0.45.
func shares() []string {
	if s := strings.Fields(os.Getenv("PICO_BENCH_SHARES")); len(s) > 0 {
		return s
	}
	return []string{"1", "0.5", "0.45"}
}

func serveFlags() []string {
	var out []string
	for _, f := range bytes.Fields([]byte(os.Getenv("PICO_BENCH_SERVE_FLAGS"))) {
		out = append(out, string(f))
	}
	return out
}
