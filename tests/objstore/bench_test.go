// Package objstore benchmarks the object store adapters on their own: the
// floor under everything the engine builds on them. Run by hand (see
// README.md); the S3 benchmarks need PICOMQ_S3_ENDPOINT like the tests.
package objstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/filestore"
	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/closedloop"
	"github.com/picomq/pico/tests/s3test"
)

type backend struct {
	name string
	open func(b *testing.B) ports.ObjectStore
}

var backends = []backend{
	{"s3", func(b *testing.B) ports.ObjectStore {
		s, err := s3store.Open(context.Background(), s3test.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"file", func(b *testing.B) ports.ObjectStore {
		s, err := filestore.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
}

func randomBody(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// reportLatency reports the median and 99th percentile of durations in µs.
func reportLatency(b *testing.B, durations []time.Duration) {
	if len(durations) == 0 {
		return
	}
	slices.Sort(durations)
	at := func(q float64) float64 {
		return float64(durations[int(q*float64(len(durations)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkRawPut measures Put latency with one writer, and throughput with
// 64 concurrent writers, each Put a new key.
func BenchmarkRawPut(b *testing.B) {
	ctx := context.Background()
	for _, be := range backends {
		for _, size := range []int{1 << 10, 64 << 10} {
			body := randomBody(size)
			b.Run(fmt.Sprintf("%s/%s/serial", be.name, sizeName(size)), func(b *testing.B) {
				s := be.open(b)
				b.SetBytes(int64(size))
				var durations []time.Duration
				i := 0
				for b.Loop() {
					start := time.Now()
					if err := s.Put(ctx, fmt.Sprintf("bench/%09d", i), body); err != nil {
						b.Fatal(err)
					}
					durations = append(durations, time.Since(start))
					i++
				}
				reportLatency(b, durations)
			})
			b.Run(fmt.Sprintf("%s/%s/64putters", be.name, sizeName(size)), func(b *testing.B) {
				const putters = 64
				s := be.open(b)
				b.SetBytes(int64(size))
				var key atomic.Int64
				lat, elapsed := closedloop.Run(b, putters, closedloop.Count(b.N), func(int) error {
					return s.Put(ctx, fmt.Sprintf("bench/%09d", key.Add(1)-1), body)
				})
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "PUTs/s")
				reportLatency(b, lat)
			})
		}
	}
}

// BenchmarkRawGetSequential reads 64 objects of 4 MiB one after another,
// whole, reporting the read throughput (MB/s).
func BenchmarkRawGetSequential(b *testing.B) {
	const objects, size = 64, 4 << 20
	ctx := context.Background()
	body := randomBody(size)
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			for i := range objects {
				if err := s.Put(ctx, fmt.Sprintf("bench/%02d", i), body); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(objects * size)
			for b.Loop() {
				for i := range objects {
					got, err := s.Get(ctx, fmt.Sprintf("bench/%02d", i), 0, -1)
					if err != nil {
						b.Fatal(err)
					}
					if len(got) != size {
						b.Fatalf("read %d bytes, want %d", len(got), size)
					}
				}
			}
		})
	}
}
