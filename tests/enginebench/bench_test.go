// Package enginebench measures the write path against a real S3 server
// (versitygw), side by side with raw PUTs of the same size in one run.
package enginebench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/closedloop"
	"github.com/picomq/pico/tests/s3test"
)

func openStore(b *testing.B) ports.ObjectStore {
	store, err := s3store.Open(context.Background(), s3test.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	return store
}

// node is an engine on a fresh store with n streams open.
type node struct {
	plane   *meta.Plane
	by      domain.Proposer
	engine  *engine.Engine
	wal     *wal.WAL
	streams []engine.Handle
}

func startNode(b *testing.B, store ports.ObjectStore, streams int) *node {
	return startNodeWith(b, wal.Config{Store: store}, streams)
}

// startNodeWith is startNode with a WAL tuned by cfg (its store is the
// node's).
func startNodeWith(b *testing.B, cfg wal.Config, streams int) *node {
	store := cfg.Store
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	plane, err := meta.Open(ctx, meta.Config{Log: memlog.New()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { plane.Close() })
	by := domain.Proposer{Node: 1, Epoch: 1}
	if _, err := plane.ProposeOne(ctx, &domain.RegisterNode{Node: 1, Epoch: 1, Slots: 1}); err != nil {
		b.Fatal(err)
	}
	cfg.Node, cfg.Epoch = 1, 1
	w := wal.Open(cfg)
	n := &node{plane: plane, by: by, wal: w, engine: engine.New(engine.Config{Plane: plane, By: by, Store: store, WAL: w})}
	// Uploads to data objects run as on a real node, and cost what they
	// cost. They stop before the bucket is emptied, or one could land in it
	// while it is.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		n.engine.RunMaintenance(ctx, noLease{}, time.Second, time.Hour)
	}()
	b.Cleanup(func() {
		cancel()
		<-stopped
		w.Close()
	})
	for i := range streams {
		r, err := plane.ProposeOne(ctx, &domain.CreateStream{By: by, Name: fmt.Sprintf("/bench/%d", i), Open: true})
		if err != nil || r.Code != domain.ResultOK {
			b.Fatalf("create: %v %v", r, err)
		}
		h, err := n.engine.Open(ctx, r.Value)
		if err != nil {
			b.Fatal(err)
		}
		n.streams = append(n.streams, h)
	}
	return n
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

var runs atomic.Int64 // keeps raw PUT keys unique across benchmark runs

// BenchmarkLoneAppend compares one 1 KiB append at a time with one raw
// 1 KiB PUT at a time on the same server, alternating the two in one loop
// so that the machine's noise falls on both alike.
func BenchmarkLoneAppend(b *testing.B) {
	store := openStore(b)
	n := startNode(b, openStore(b), 1)
	raw, appends := loneAppends(b, store, n)
	rawP50, appendP50 := p50(raw), p50(appends)
	b.ReportMetric(float64(rawP50.Microseconds()), "raw-put-p50-µs")
	b.ReportMetric(float64(appendP50.Microseconds()), "append-p50-µs")
	b.ReportMetric(float64(appendP50)/float64(rawP50), "append/raw")
	b.ReportMetric(float64(n.wal.Stats().Puts)/float64(b.N), "puts/append")
}

// loneAppends makes b.N raw 1 KiB PUTs to store and b.N lone 1 KiB appends
// to n's first stream, alternating, and returns the times of each.
func loneAppends(b *testing.B, store ports.ObjectStore, n *node) (raw, appends []time.Duration) {
	body := make([]byte, 1024)
	run := runs.Add(1)
	raw, appends = make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
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
	return raw, appends
}

func p50(lat []time.Duration) time.Duration {
	slices.Sort(lat)
	return lat[len(lat)/2]
}

// BenchmarkConcurrentAppends runs 64 (and 1024, 2048) appenders of 1 KiB
// records, one stream each, with the WAL's pipelining off (1) and at its
// default (4), and reports throughput, latency and how many records share
// a PUT.
func BenchmarkConcurrentAppends(b *testing.B) {
	for _, appenders := range []int{64, 1024, 2048} {
		for _, pipeline := range []int{1, 4} {
			b.Run(fmt.Sprintf("appenders=%d/pipeline=%d", appenders, pipeline), func(b *testing.B) {
				fanIn(b, wal.Config{Store: openStore(b), Pipeline: pipeline}, appenders, 1, closedloop.Count(b.N))
			})
		}
	}
}

// BenchmarkColdReplay writes PICO_BENCH_REPLAY_MIB (default 256) of 64 KiB
// records into data objects, then compares a cold sequential read of the
// stream through a fresh engine with raw sequential GETs of the same
// objects. The figure that matters is the ratio of the two MB/s.
func BenchmarkColdReplay(b *testing.B) {
	mib := 256
	if v, err := strconv.Atoi(os.Getenv("PICO_BENCH_REPLAY_MIB")); err == nil && v > 0 {
		mib = v
	}
	store := openStore(b)
	n := startNode(b, store, 1)
	h, id := n.streams[0], n.streams[0].ID()
	body := make([]byte, 64<<10)
	ctx := context.Background()
	for i := range mib * 16 {
		if _, err := h.Append(ctx, ports.AppendRequest{Records: []domain.Record{{Body: body}}}); err != nil {
			b.Fatal(err)
		}
		if i%256 == 255 { // 16 MiB objects
			if _, err := n.engine.Upload(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := n.engine.Upload(ctx); err != nil {
		b.Fatal(err)
	}
	keys := dataKeys(b, store)
	total := float64(mib << 20)
	b.Run("raw-get", func(b *testing.B) {
		start := time.Now()
		for range b.N {
			for _, k := range keys {
				if _, err := store.Get(ctx, k, 0, -1); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(total*float64(b.N)/time.Since(start).Seconds()/(1<<20), "MB/s")
	})
	b.Run("replay", func(b *testing.B) {
		start := time.Now()
		for range b.N {
			cold := engine.New(engine.Config{Plane: n.plane, By: n.by, Store: store, WAL: n.wal})
			read := 0
			for off := uint64(0); ; {
				recs, err := cold.ReadCommitted(ctx, id, off, 1<<20)
				if err != nil {
					b.Fatal(err)
				}
				if len(recs) == 0 {
					break
				}
				off += uint64(len(recs))
				read += len(recs)
			}
			if read != mib*16 {
				b.Fatalf("replayed %d records, wrote %d", read, mib*16)
			}
		}
		b.ReportMetric(total*float64(b.N)/time.Since(start).Seconds()/(1<<20), "MB/s")
	})
}

func dataKeys(b *testing.B, store ports.ObjectStore) []string {
	var keys []string
	for after := ""; ; {
		page, err := store.List(context.Background(), "data/", after, 1000)
		if err != nil {
			b.Fatal(err)
		}
		if len(page) == 0 {
			return keys
		}
		for _, o := range page {
			keys = append(keys, o.Key)
		}
		after = page[len(page)-1].Key
	}
}

type noLease struct{}

func (noLease) Held() (uint64, bool) { return 0, false }

// fanIn runs streams × perStream appenders of 1 KiB records on a node
// whose WAL cfg tunes, each waiting for its acknowledgement, while more
// says so: appends/s, records per PUT, PUTs/s and per million appends, and
// p50/p99 in ms.
func fanIn(b *testing.B, cfg wal.Config, streams, perStream int, more func() bool) {
	body := make([]byte, 1024)
	n := startNodeWith(b, cfg, streams)
	all, elapsed := closedloop.Run(b, streams*perStream, more, func(a int) error {
		_, err := n.streams[a%streams].Append(context.Background(), ports.AppendRequest{Records: []domain.Record{{Body: body}}})
		return err
	})
	stats := n.wal.Stats()
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(stats.Submissions)/float64(stats.Puts), "records/put")
	b.ReportMetric(float64(stats.Puts)/elapsed.Seconds(), "puts/s")
	b.ReportMetric(float64(stats.Puts)*1e6/float64(len(all)), "puts/M-appends")
	closedloop.ReportMs(b, "append", all)
}
