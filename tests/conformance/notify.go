package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// wakeWait bounds how long a notification may take.
const wakeWait = 5 * time.Second

func notifier(t *testing.T, log ports.MetaLog) ports.LogNotifier {
	n, ok := log.(ports.LogNotifier)
	if !ok {
		t.Skip("the log does not implement ports.LogNotifier")
	}
	return n
}

func subscribe(ctx context.Context, t *testing.T, n ports.LogNotifier) <-chan struct{} {
	t.Helper()
	ch, err := n.Notifications(ctx)
	if err != nil {
		t.Fatalf("Notifications: %v", err)
	}
	return ch
}

// drain discards wake-ups already pending or arriving within d; spurious
// ones are allowed, and must not be mistaken for the one under test.
func drain(t *testing.T, ch <-chan struct{}, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatal("notification channel closed early")
			}
		case <-deadline:
			return
		}
	}
}

// waitClosed fails unless ch is closed within wakeWait.
func waitClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	deadline := time.After(wakeWait)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("notification channel still open after %v", wakeWait)
		}
	}
}

func testNotify(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	n := notifier(t, log)
	subCtx, cancel := context.WithCancel(ctx)
	ch := subscribe(subCtx, t, n)
	for index := uint64(1); index <= 3; index++ {
		drain(t, ch, 100*time.Millisecond)
		appendRange(ctx, t, log, index, index)
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatal("notification channel closed early")
			}
		case <-time.After(wakeWait):
			t.Fatalf("Append(%d) woke no subscriber within %v", index, wakeWait)
		}
	}
	cancel()
	waitClosed(t, ch)
}

func testNotifyClose(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	ch := subscribe(ctx, t, notifier(t, log))
	if err := log.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitClosed(t, ch)
}

func testClosed(t *testing.T, open MetaLogOpener) {
	ctx := testContext(t)
	log, _ := open(t)
	appendRange(ctx, t, log, 1, 1)
	if err := log.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := log.Append(ctx, 2, []byte("x")); err == nil {
		t.Error("Append after Close succeeded")
	}
	if _, err := log.Read(ctx, 0, 10); err == nil {
		t.Error("Read after Close succeeded")
	}
	if _, err := log.LastIndex(ctx); err == nil {
		t.Error("LastIndex after Close succeeded")
	}
}
