package picoclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// heldWriter holds a response's status line until hold is closed: the
// request was judged and written, its answer is late.
type heldWriter struct {
	http.ResponseWriter
	hold <-chan struct{}
}

func (w heldWriter) WriteHeader(s int) { <-w.hold; w.ResponseWriter.WriteHeader(s) }

// TestProducerClaimAfterALateSuccess: batch a is accepted at epoch 1 but
// answered late; meanwhile another writer takes epoch 5 and batch b,
// fenced, claims epoch 6 counting from a. When a's success arrives, b must
// become seq 0 of epoch 6 (as the server's gap says) rather than fail.
func TestProducerClaimAfterALateSuccess(t *testing.T) {
	f := &fakeStream{}
	release, judgedA, sawGap := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var onceA, onceGap sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		epoch, seq := r.Header.Get(hdrProducerEpoch), r.Header.Get(hdrProducerSeq)
		if r.Header.Get(hdrProducerID) == "w" && epoch == "1" && seq == "0" {
			onceA.Do(func() { close(judgedA) })
			f.serve(heldWriter{w, release}, r)
			return
		}
		rec := httptest.NewRecorder()
		f.serve(rec, r)
		if rec.Code == http.StatusConflict && epoch == "6" {
			onceGap.Do(func() { close(sawGap) })
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	c := New(srv.URL, Options{Timeout: 5 * time.Second})
	ctx := t.Context()
	p := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 1, ClaimOnFence: true, MaxBatchRecords: 1, MaxInFlight: 2,
		MaxBackoff: time.Millisecond})
	if _, err := p.Append(ctx, Record{Body: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	<-judgedA
	if _, err := c.Append(ctx, "/s", []Record{{Body: []byte("x")}}, AppendOptions{Producer: &ProducerStamp{ID: "w", Epoch: 5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(ctx, Record{Body: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	<-sawGap
	close(release)
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("flush after the claim: %v", err)
	}
	if got := f.bodies(); !slices.Equal(got, []string{"a", "x", "b"}) {
		t.Fatalf("stream %q", got)
	}
}

// TestProducerRefusesAReusedEpoch: a writer restarted with the epoch of
// its predecessor would have its first batches dropped as repeats; it
// fails with ErrEpochInUse instead.
func TestProducerRefusesAReusedEpoch(t *testing.T) {
	f, c := newFakeStream(t, nil)
	before := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 3})
	mustAppendAll(t, before, "a", "b")
	after := c.NewProducer("/s", ProducerOptions{ID: "w", Epoch: 3})
	ack, err := after.Append(t.Context(), Record{Body: []byte("c")})
	if err != nil {
		t.Fatal(err)
	}
	if err := ack.Wait(t.Context()); !errors.Is(err, ErrEpochInUse) {
		t.Fatalf("a reused epoch: %v, want ErrEpochInUse", err)
	}
	if got := f.bodies(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("stream %q", got)
	}
	fresh := c.NewProducer("/s", ProducerOptions{ID: "w"}) // the clock's epoch is above 3
	mustAppendAll(t, fresh, "c")
	if got := f.bodies(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("stream %q", got)
	}
}
