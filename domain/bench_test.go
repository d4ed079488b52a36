package domain

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

const idleStreams = 1_000_000

var benchMeta = []byte(`{"ct":"app/json","r":70}`) // 24 bytes

// idleState creates n open streams on one node through Apply.
func idleState(tb testing.TB, n int) State {
	s := NewState()
	by := Proposer{Node: 1, Epoch: 1}
	s.Apply(&RegisterNode{Node: 1, Epoch: 1, Address: "n1:7000", Slots: 1})
	for i := range n {
		c := &CreateStream{By: by, Name: fmt.Sprintf("/streams/entity-%07d", i), Meta: benchMeta, Open: true, NowMs: 1}
		if r := s.Apply(c); r.Code != ResultOK {
			tb.Fatalf("create %d: %v", i, r)
		}
	}
	return s
}

func skipShort(b *testing.B) {
	if testing.Short() {
		b.Skip("slow: builds a million streams")
	}
}

func BenchmarkApplyCreateStream(b *testing.B) {
	s := idleState(b, 0)
	cmds := make([]CreateStream, b.N)
	for i := range cmds {
		cmds[i] = CreateStream{By: Proposer{1, 1}, Name: fmt.Sprintf("/streams/entity-%07d", i), Meta: benchMeta, Open: true}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range cmds {
		if r := s.Apply(&cmds[i]); r.Code != ResultOK {
			b.Fatal(r)
		}
	}
}

// BenchmarkEncodeDecodeState1M reports the snapshot size and the encode and
// decode times of a million idle streams.
func BenchmarkEncodeDecodeState1M(b *testing.B) {
	skipShort(b)
	s := idleState(b, idleStreams)
	enc := EncodeState(&s)
	b.Run("Encode", func(b *testing.B) {
		for b.Loop() {
			enc = EncodeState(&s)
		}
		b.ReportMetric(float64(len(enc)), "snapshot-B")
		b.ReportMetric(float64(len(enc))/idleStreams, "B/stream")
	})
	b.Run("Decode", func(b *testing.B) {
		for b.Loop() {
			got, err := DecodeState(enc)
			if err != nil || got.StreamCount() != idleStreams {
				b.Fatalf("decode: %v, %d streams", err, got.StreamCount())
			}
		}
		b.ReportMetric(float64(len(enc)), "snapshot-B")
	})
}

// BenchmarkIdleStreamBytes reports the live heap held per idle stream.
func BenchmarkIdleStreamBytes(b *testing.B) {
	skipShort(b)
	var perStream float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		s := idleState(b, idleStreams)
		build := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s.StreamCount() != idleStreams {
			b.Fatal("streams missing")
		}
		runtime.KeepAlive(s)
		perStream = float64(after.HeapAlloc-before.HeapAlloc) / idleStreams
		b.ReportMetric(float64(build.Nanoseconds())/idleStreams, "build-ns/stream")
	}
	b.ReportMetric(perStream, "B/stream")
}

// BenchmarkOpenStreamsOf1M compares counting a process's open streams by
// a walk (StreamsOf) with the index (OpenStreamsOf), at a million
// streams: the pico_streams_owned gauge on every scrape.
func BenchmarkOpenStreamsOf1M(b *testing.B) {
	skipShort(b)
	s, by := idleState(b, idleStreams), Proposer{Node: 1, Epoch: 1}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			n := 0
			s.StreamsOf(by, func(*Stream) bool { n++; return true })
			if n != idleStreams {
				b.Fatalf("walk counted %d", n)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			if n := s.OpenStreamsOf(by); n != idleStreams {
				b.Fatalf("index counts %d", n)
			}
		}
	})
}
