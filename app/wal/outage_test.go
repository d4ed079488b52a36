package wal

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/faultstore"
)

// TestStoreOutageDelaysAcknowledgementsWithoutFailingTheWAL: with no retry
// bound, frames submitted while the store refuses every PUT are stored, in
// order, once it takes them again, and the WAL goes on working.
func TestStoreOutageDelaysAcknowledgementsWithoutFailingTheWAL(t *testing.T) {
	store := faultstore.Outage(memstore.New())
	w := Open(Config{Store: store, Node: 1, Epoch: 1})
	defer w.Close()
	store.SetEnabled(true)
	var order []uint64
	done := make(chan error, 3)
	for off := range uint64(3) {
		if err := w.Submit(frame(1, off, "x"), func(err error) { order = append(order, off); done <- err }); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("a frame was answered (%v) while the store refused every PUT", err)
	case <-time.After(200 * time.Millisecond):
	}
	if w.FailingFor() == 0 {
		t.Error("FailingFor is 0 while the store refuses the WAL's PUTs")
	}
	store.SetEnabled(false)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatalf("a frame after the store came back: %v", err)
		}
	}
	if order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Errorf("acknowledged in order %v, want 0 1 2", order)
	}
	if err := submitWait(t, w, frame(1, 3, "y")); err != nil || w.Err() != nil || w.FailingFor() != 0 {
		t.Fatalf("append after the outage: %v (WAL error %v, failing for %v)", err, w.Err(), w.FailingFor())
	}
	frames, err := Fence(context.Background(), store, 1, 1, domain.Proposer{Node: 2, Epoch: 1})
	if err != nil || len(frames) != 4 {
		t.Fatalf("fence read %d frames (%v), want all 4", len(frames), err)
	}
}

// TestCloseGivesUpOnAStoreThatIsDown: Close returns within CloseWithin
// even while the store refuses everything, failing what it never stored.
func TestCloseGivesUpOnAStoreThatIsDown(t *testing.T) {
	store := faultstore.Outage(memstore.New())
	store.SetEnabled(true)
	w := Open(Config{Store: store, Node: 1, Epoch: 1, CloseWithin: 200 * time.Millisecond})
	done := make(chan error, 1)
	if err := w.Submit(frame(1, 0, "x"), func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := w.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %v with the store down, want about CloseWithin", took)
	}
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Close: %v, want ErrClosed naming what was not stored", err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("the frame never stored: %v, want ErrClosed", err)
	}
}

// lockedBuffer is a log sink the WAL's goroutines may share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestStoreOutageLogsOneLineEachWay: an outage of many retries is one
// warning when it starts and one line when it ends, at info and above.
func TestStoreOutageLogsOneLineEachWay(t *testing.T) {
	var logs lockedBuffer
	store := faultstore.Outage(memstore.New())
	w := Open(Config{Store: store, Node: 1, Epoch: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer w.Close()
	store.SetEnabled(true)
	done := make(chan error, 1)
	if err := w.Submit(frame(1, 0, "x"), func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // several retries: 10, 20, 40, 80, 160 ms
	store.SetEnabled(false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || strings.Count(out, "WAL uploads succeed again") != 1 {
		t.Errorf("want one warning and one recovery line, got:\n%s", out)
	}
}

// TestSubmitByGivesUpWhenTheBufferStaysFull: with the store down and the
// buffer full, SubmitBy fails with ErrBacklog at its deadline, submitting
// nothing, where Submit would wait for as long as the outage lasts.
func TestSubmitByGivesUpWhenTheBufferStaysFull(t *testing.T) {
	store := faultstore.Outage(memstore.New())
	store.SetEnabled(true)
	w := Open(Config{Store: store, Node: 1, Epoch: 1, MaxBufferedBytes: 64})
	defer w.Close()
	first := make(chan error, 1)
	if err := w.Submit(frame(1, 0, "fills the buffer: more than 64 bytes of frame in all, header included"), func(err error) { first <- err }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := w.SubmitBy(start.Add(100*time.Millisecond), frame(1, 1, "x"), func(error) { t.Error("a frame refused with ErrBacklog was answered") })
	if took := time.Since(start); !errors.Is(err, ErrBacklog) || took < 100*time.Millisecond || took > 2*time.Second {
		t.Fatalf("SubmitBy with the buffer full: %v after %v, want ErrBacklog at its deadline", err, took)
	}
	store.SetEnabled(false)
	if err := <-first; err != nil {
		t.Fatalf("the frame that filled the buffer, once the store is back: %v", err)
	}
	if err := submitWait(t, w, frame(1, 1, "x")); err != nil {
		t.Fatalf("a submission once there is room: %v", err)
	}
}
