package picobench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/adapters/prommetrics"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/floor"
)

// BenchmarkDSAppendPath measures what pico adds to a Durable Streams append
// beyond the HTTP server and the object store, beside the floor (package
// floor) in one run: 1 KiB appends from 64 appenders, each on its own
// stream, go straight to the handler, and the WAL's PUTs (and data
// objects) are dropped after a pause like a PUT's, so that bulks group
// about as many appends as on a real store. It reports this process's CPU
// time and allocations per append; pico's minus the floor's is what the
// protocol, the stream service and the engine cost.
func BenchmarkDSAppendPath(b *testing.B) {
	const appenders = 64
	sides := []struct {
		name  string
		start func(b *testing.B, store ports.ObjectStore) http.Handler
	}{
		{"pico", startMemNode},
		{"pico+metrics", startMeteredNode},
		{"floor", func(b *testing.B, store ports.ObjectStore) http.Handler {
			return floor.Handler(wal.Open(wal.Config{Store: store, Node: 1, Epoch: 1}))
		}},
	}
	for _, side := range sides {
		b.Run(side.name, func(b *testing.B) {
			measureAppends(b, side.start(b, pausingStore{memstore.New()}), appenders, "")
		})
	}
}

// measureAppends has appenders post 1 KiB appends to streams of their own
// on h, b.N in all, each with token as its bearer credential if given,
// and reports this process's CPU time and allocations per append.
func measureAppends(b *testing.B, h http.Handler, appenders int, token string) {
	for w := range appenders {
		if code := serveWith(h, http.MethodPut, streamPath(w), "application/octet-stream", nil, token); code != http.StatusCreated {
			b.Fatalf("create: %d", code)
		}
	}
	var next atomic.Int64
	body := bytes.Repeat([]byte("x"), 1024)
	done := make(chan struct{}, appenders)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for w := range appenders {
		go func() {
			defer func() { done <- struct{}{} }()
			for next.Add(1) <= int64(b.N) {
				if code := serveWith(h, http.MethodPost, streamPath(w), "application/octet-stream", body, token); code != http.StatusNoContent {
					b.Errorf("append: %d", code)
					return
				}
			}
		}()
	}
	for range appenders {
		<-done
	}
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/1e3/float64(b.N), "cpu-µs/append")
}

// BenchmarkDSAppendJSON measures a Durable Streams JSON append of 100
// messages of about 1 KiB each (one array, split into one record per
// message), straight to the handler of an in-process node whose store
// pauses like a PUT: MB/s of JSON taken and this process's CPU time per
// append, which is mostly checking, compacting and splitting the JSON.
func BenchmarkDSAppendJSON(b *testing.B) {
	h := startMemNode(b, pausingStore{memstore.New()})
	const path = "/v1/stream/json"
	if code := serveJSON(h, http.MethodPut, path, nil); code != http.StatusCreated {
		b.Fatalf("create: %d", code)
	}
	var body bytes.Buffer
	body.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			body.WriteString(", ")
		}
		fmt.Fprintf(&body, `{"id": %d, "tags": ["a", "b"], "text": "%s"}`, i, bytes.Repeat([]byte("lorem ipsum "), 80))
	}
	body.WriteByte(']')
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		if code := serveJSON(h, http.MethodPost, path, body.Bytes()); code != http.StatusNoContent {
			b.Fatalf("append: %d", code)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/1e3/float64(b.N), "cpu-µs/append")
}

func streamPath(w int) string { return fmt.Sprintf("/v1/stream/path-%d", w) }

// startMemNode runs a node on an in-memory log and store behind the
// Durable Streams handler.
func startMemNode(b *testing.B, store ports.ObjectStore) http.Handler {
	log := memlog.New()
	n, err := node.Start(context.Background(), node.Config{ID: 1, Address: "http://bench", Slots: 1, Log: log, Lease: log.Lease(), Store: store})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	return dshttp.New(dshttp.Config{Streams: n.Streams()})
}

// startMeteredNode is startMemNode measured as pico serve measures it:
// the request, append, store, WAL and proposal series.
func startMeteredNode(b *testing.B, store ports.ObjectStore) http.Handler {
	m := prommetrics.New()
	log := memlog.New()
	cfg := node.Config{ID: 1, Address: "http://bench", Slots: 1, Log: log, Lease: log.Lease(), Store: m.Store(store),
		ProposeSeconds: m.ProposeSeconds}
	cfg.WAL.PutSeconds, cfg.WAL.PutBytes = m.WALUploadSeconds, m.WALUploadBytes
	n, err := node.Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	return m.Handler(prommetrics.ProtocolDS, dshttp.New(dshttp.Config{Streams: m.Streams(n.Streams())}))
}

// pausingStore takes about as long as a PUT to a local S3 server, without
// using the CPU meanwhile, and keeps no bodies: nothing reads them back
// here, and copying gigabytes into fresh memory would cost both sides more
// than what the benchmark measures.
type pausingStore struct{ ports.ObjectStore }

func (s pausingStore) Put(ctx context.Context, key string, body []byte) error {
	time.Sleep(time.Millisecond)
	return nil
}

// PutIfAbsent keeps the node's start check (a second conditional write of
// one key must fail) real, so the node accepts the store.
func (s pausingStore) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if strings.HasPrefix(key, "check/") {
		return s.ObjectStore.PutIfAbsent(ctx, key, body)
	}
	time.Sleep(time.Millisecond)
	return nil
}

// serveOnce has h serve one request of bytes and returns its status.
func serveOnce(h http.Handler, method, path string, body []byte) int {
	return serve(h, method, path, "application/octet-stream", body)
}

// serveJSON is serveOnce for JSON.
func serveJSON(h http.Handler, method, path string, body []byte) int {
	return serve(h, method, path, "application/json", body)
}

func serve(h http.Handler, method, path, contentType string, body []byte) int {
	return serveWith(h, method, path, contentType, body, "")
}

// serveWith is serve with token, if given, as the bearer credential.
func serveWith(h http.Handler, method, path, contentType string, body []byte, token string) int {
	w := &statusWriter{header: http.Header{}}
	r := &http.Request{Method: method, URL: &url.URL{Path: path}, RequestURI: path, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {contentType}}, Host: "bench",
		Body: http.NoBody, ContentLength: int64(len(body))}
	if body != nil {
		r.Body = readCloser{bytes.NewReader(body)}
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	h.ServeHTTP(w, r)
	return w.status
}

// statusWriter is the least a handler can write to: it keeps the status.
type statusWriter struct {
	header http.Header
	status int
}

func (w *statusWriter) Header() http.Header { return w.header }
func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
