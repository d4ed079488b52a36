package enginebench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/closedloop"
	"github.com/picomq/pico/tests/s3fault"
)

// cloudStore is a bucket on versitygw reached through a proxy that adds
// the latency of profile to every request.
func cloudStore(b *testing.B, profile s3fault.Latency) ports.ObjectStore {
	store, err := s3store.Open(context.Background(), s3fault.CloudURL(b, profile))
	if err != nil {
		b.Fatal(err)
	}
	return store
}

// BenchmarkCloudLoneAppend is BenchmarkLoneAppend on stores with a cloud
// store's latency: one 1 KiB append at a time against one raw 1 KiB PUT
// at a time through the same proxy, alternating.
func BenchmarkCloudLoneAppend(b *testing.B) {
	for _, p := range s3fault.Profiles {
		b.Run(p.Name, func(b *testing.B) {
			store := cloudStore(b, p.Latency)
			n := startNode(b, store, 1)
			raw, appends := loneAppends(b, store, n)
			closedloop.ReportMs(b, "raw-put", raw)
			closedloop.ReportMs(b, "append", appends)
			b.ReportMetric(float64(p50(appends))/float64(p50(raw)), "append/raw-p50")
			b.ReportMetric(float64(n.wal.Stats().Puts)/float64(b.N), "puts/append")
		})
	}
}

// BenchmarkCloudFanIn runs 100 streams of 10 appenders each (1 KiB
// records, each appender waiting for its acknowledgement) on stores with
// a cloud store's latency, with the WAL's pipelining off (1) and allowing
// 2 and 4 (the default) bulks to overlap on latency alone: appends/s,
// latency, records per PUT and PUTs/s.
func BenchmarkCloudFanIn(b *testing.B) {
	const streams, perStream = 100, 10
	for _, p := range s3fault.Profiles {
		for _, pipeline := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/pipeline=%d", p.Name, pipeline), func(b *testing.B) {
				fanIn(b, wal.Config{Store: cloudStore(b, p.Latency), Pipeline: pipeline}, streams, perStream, closedloop.Count(b.N))
			})
		}
	}
}

// BenchmarkCostDial is the cost dial's curve: 64 and 1024 appenders (one
// stream each, 1 KiB records, each waiting for its acknowledgement) for
// PICO_BENCH_SECONDS (5) per case on the S3 Standard-like store, with the
// WAL's PUTs a second unbounded and bounded at 40, 20, 10 and 5: PUTs/s
// against append p50/p99. Run it with -benchtime 1x.
func BenchmarkCostDial(b *testing.B) {
	seconds := 5
	if v, err := strconv.Atoi(os.Getenv("PICO_BENCH_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	for _, appenders := range []int{64, 1024} {
		for _, rate := range []float64{0, 40, 20, 10, 5} {
			b.Run(fmt.Sprintf("appenders=%d/max-puts=%v", appenders, rate), func(b *testing.B) {
				cfg := wal.Config{Store: cloudStore(b, s3fault.S3Standard), MaxPutRate: rate}
				fanIn(b, cfg, appenders, 1, closedloop.For(time.Duration(seconds)*time.Second))
			})
		}
	}
}
