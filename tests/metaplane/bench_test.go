package metaplane

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/pgtest"
)

// backends returns the SQL logs a benchmark runs against.
func backends(b *testing.B) map[string]func(b *testing.B) string {
	return map[string]func(b *testing.B) string{
		"sqlite":   func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "meta.db") },
		"postgres": func(b *testing.B) string { return pgtest.URL(b) },
	}
}

// BenchmarkPropose measures commands/s through the proposer with 1, 16 and
// 256 concurrent proposers, each command a separate Propose call.
func BenchmarkPropose(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, proposers := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("%s/proposers=%d", backend, proposers), func(b *testing.B) {
				url := backends(b)[backend](b)
				log := openLog(b, url)
				p := openPlane(b, log, meta.Config{})
				by := register(b, p, 1, 1)
				first, _ := log.LastIndex(context.Background())
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range proposers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							key := fmt.Sprintf("k%09d", i)
							if _, err := p.ProposeOne(context.Background(), &domain.PutKV{By: by,
								Space: domain.SpaceRegistry, Key: key, Value: []byte("v")}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				last, _ := log.LastIndex(context.Background())
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cmds/s")
				b.ReportMetric(float64(b.N)/float64(max(last-first, 1)), "cmds/row")
			})
		}
	}
}

// BenchmarkColdStart1M measures opening a plane on a log holding a snapshot
// of one million idle streams plus 1,000 rows after it, and the heap the
// applied state takes per stream.
func BenchmarkColdStart1M(b *testing.B) {
	const streams, tailRows = 1_000_000, 1000
	st := millionStreams(b, streams)
	snapshot := domain.EncodeState(&st)
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			log := openLog(b, backends(b)[backend](b))
			seedLog(b, log, st, snapshot, tailRows)
			b.ResetTimer()
			for range b.N {
				before := heapInUse()
				p, err := meta.Open(context.Background(), meta.Config{Log: log})
				if err != nil {
					b.Fatal(err)
				}
				v := p.View()
				if v.StreamCount() != streams || v.Index != st.Index+tailRows {
					b.Fatalf("opened at %d with %d streams", v.Index, v.StreamCount())
				}
				b.StopTimer()
				b.ReportMetric(float64(heapInUse()-before)/streams, "heap-B/stream")
				runtime.KeepAlive(v)
				p.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(len(snapshot))/streams, "snapshot-B/stream")
		})
	}
}

func millionStreams(b *testing.B, n int) domain.State {
	st := domain.NewState()
	by := domain.Proposer{Node: 1, Epoch: 1}
	st.ApplyRow(1, []domain.Command{&domain.RegisterNode{Node: 1, Epoch: 1, Address: "http://127.0.0.1:4437", Slots: 1}})
	meta := []byte(`{"ct":"application/json"}`)
	for i := range n {
		r := st.Apply(&domain.CreateStream{By: by, Name: fmt.Sprintf("/streams/entity-%07d", i), Meta: meta, Open: true, NowMs: 1})
		if r.Code != domain.ResultOK {
			b.Fatal(r)
		}
	}
	st.Index = 2
	return st
}

func seedLog(b *testing.B, log ports.MetaLog, st domain.State, snapshot []byte, rows int) {
	ctx := context.Background()
	if err := log.PutSnapshot(ctx, ports.Snapshot{Index: st.Index, Payload: snapshot}); err != nil {
		b.Fatal(err)
	}
	by := domain.Proposer{Node: 1, Epoch: 1}
	for i := range rows {
		cmds := make([]domain.Command, 10)
		for j := range cmds {
			key := fmt.Sprintf("tail/%d/%d", i, j)
			cmds[j] = &domain.PutKV{By: by, Space: domain.SpaceRegistry, Key: key, Value: []byte(key)}
		}
		if err := log.Append(ctx, st.Index+1+uint64(i), domain.EncodeRow(cmds)); err != nil {
			b.Fatal(err)
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
