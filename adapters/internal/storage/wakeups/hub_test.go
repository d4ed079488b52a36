package wakeups

import (
	"context"
	"testing"
	"time"
)

func TestWakesCoalesce(t *testing.T) {
	h := New()
	defer h.Close()
	ch, err := h.Subscribe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		h.Wake() // must not block although nobody reads
	}
	if _, ok := <-ch; !ok {
		t.Fatal("channel closed")
	}
	select {
	case <-ch:
		t.Fatal("five wakes left more than one pending signal")
	default:
	}
}

func TestChannelClosesOnCancelAndClose(t *testing.T) {
	h := New()
	ctx, cancel := context.WithCancel(t.Context())
	byCancel, _ := h.Subscribe(ctx)
	byClose, _ := h.Subscribe(t.Context())
	cancel()
	expectClosed(t, byCancel)
	h.Wake() // must not panic on the dropped channel
	h.Close()
	h.Close()
	expectClosed(t, byClose)
	if _, err := h.Subscribe(t.Context()); err != ErrClosed {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
}

func expectClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("channel not closed")
		}
	}
}
