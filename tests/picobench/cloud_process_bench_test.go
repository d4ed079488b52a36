package picobench

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3fault"
)

// BenchmarkCloudFanInProcesses is the fan-in as users run it, each part
// its own process: pico serve on versitygw behind the latency proxy (this
// process), and pico bench with 1000 appends of 1 KiB in flight over 100
// streams (10 a stream) on 8 connections for PICO_BENCH_SECONDS (10) after
// a 2 s warmup, with the WAL's pipelining off (1) and at its default (4).
// It reports pico bench's figures: appends/s, p50/p99/max ms, records per
// WAL PUT and WAL PUTs/s. Run it with -benchtime 1x.
func BenchmarkCloudFanInProcesses(b *testing.B) {
	seconds := envInt("PICO_BENCH_SECONDS", 10)
	for _, p := range s3fault.Profiles {
		for _, pipeline := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/pipeline=%d", p.Name, pipeline), func(b *testing.B) {
				store, dir := s3fault.CloudURL(b, p.Latency), b.TempDir()
				n := picoproc.Serve(b, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
					"--meta-url", "sqlite:"+filepath.Join(dir, "meta.db"), "--storage", store,
					"--wal", store+"&pipeline="+strconv.Itoa(pipeline))
				bench := exec.Command(picoproc.Binary(b), "bench", "-d", strconv.Itoa(seconds), "--warmup", "2",
					"--streams", "100", "-w", "1000", "--connections", "8", "--json", "--metrics", n.AdminURL+"/metrics")
				bench.Env = picoproc.Env("PICO_ENDPOINT="+n.URL, "PICO_CONFIG="+filepath.Join(dir, "config.toml"))
				b.ResetTimer()
				out, err := bench.Output()
				b.StopTimer()
				if err != nil {
					b.Fatalf("pico bench: %v\n%s", err, out)
				}
				var s struct {
					Seconds       float64            `json:"seconds"`
					AppendsPerSec float64            `json:"appends_per_sec"`
					LatencyMs     map[string]float64 `json:"latency_ms"`
					Cost          struct {
						WALPuts          float64 `json:"wal_puts"`
						RecordsPerWALPut float64 `json:"records_per_wal_put"`
					} `json:"cost"`
				}
				if err := json.Unmarshal(out, &s); err != nil {
					b.Fatalf("pico bench printed %q: %v", out, err)
				}
				b.ReportMetric(s.AppendsPerSec, "appends/s")
				b.ReportMetric(s.LatencyMs["p50"], "p50-ms")
				b.ReportMetric(s.LatencyMs["p99"], "p99-ms")
				b.ReportMetric(s.LatencyMs["max"], "max-ms")
				b.ReportMetric(s.Cost.RecordsPerWALPut, "records/put")
				b.ReportMetric(s.Cost.WALPuts/s.Seconds, "puts/s")
			})
		}
	}
}
