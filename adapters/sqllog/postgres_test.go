package sqllog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/pgtest"
)

func TestPostgresConcurrentOpen(t *testing.T) {
	openConcurrently(t, pgtest.URL(t), 8)
}

func TestPostgresPoolSize(t *testing.T) {
	log, err := Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if n := log.db.Stats().MaxOpenConnections; n != 8 {
		t.Fatalf("MaxOpenConnections = %d, want 8", n)
	}
}

// TestPostgresNotifyAcrossHandles checks the wake-up travels through the
// database, not through process memory.
func TestPostgresNotifyAcrossHandles(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	listener, writer := openLog(t, url), openLog(t, url)
	ch, err := listener.Notifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.Append(ctx, 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	expectWake(t, ch, 5*time.Second, "append on another handle")
}

// TestPostgresSurvivesRestart restarts the server: the listener must
// reconnect, wake subscribers for what it may have missed, and listen again.
func TestPostgresSurvivesRestart(t *testing.T) {
	ctx := t.Context()
	log := openLog(t, pgtest.URL(t))
	ch, err := log.Notifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appendEventually(t, log, 1)
	expectWake(t, ch, 5*time.Second, "append before restart")

	pgtest.Restart(t)
	expectWake(t, ch, 30*time.Second, "reconnect after restart")
	drainFor(ch, 200*time.Millisecond)
	appendEventually(t, log, 2)
	expectWake(t, ch, 10*time.Second, "append after restart")
	rows, err := log.Read(ctx, 0, 10)
	if err != nil || len(rows) != 2 {
		t.Fatalf("Read after restart = %d rows, %v; want 2 rows", len(rows), err)
	}
}

func openLog(t *testing.T, url string) *Log {
	t.Helper()
	log, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	return log
}

// appendEventually retries while pooled connections broken by a restart are
// discarded; ErrConflict means an earlier try stored the row.
func appendEventually(t *testing.T, log *Log, index uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := log.Append(context.Background(), index, []byte("row"))
		if err == nil || errors.Is(err, ports.ErrConflict) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Append(%d): %v", index, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func expectWake(t *testing.T, ch <-chan struct{}, wait time.Duration, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: notification channel closed", what)
		}
	case <-time.After(wait):
		t.Fatalf("%s: no wake-up within %v", what, wait)
	}
}

func drainFor(ch <-chan struct{}, d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}
