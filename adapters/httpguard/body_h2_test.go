package httpguard

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sharedBody is pipeBody for an HTTP/2 body: conn counts the bytes its
// connection delivers, the test's stand-in for the other streams.
func sharedBody(t *testing.T, limits BodyLimits) (r *rateReader, w io.WriteCloser, conn *atomic.Int64) {
	t.Helper()
	r, pw := pipeBody(t, limits)
	conn = new(atomic.Int64)
	r.shared = newSharedConn(conn)
	return r, pw, conn
}

// busy adds rate bytes a second to conn until stop closes.
func busy(conn *atomic.Int64, rate int64, stop <-chan struct{}) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			conn.Add(rate / 100)
		}
	}
}

var h2Limits = BodyLimits{MinRate: 1000, Grace: 200 * time.Millisecond, Idle: 300 * time.Millisecond}

// TestAnHTTP2BodyWaitingBehindABusyConnectionIsNotCut: the stream gets no
// byte for well past the grace and the idle limit, but its connection
// carries other streams' bytes meanwhile: the client is not slow.
func TestAnHTTP2BodyWaitingBehindABusyConnectionIsNotCut(t *testing.T) {
	r, w, conn := sharedBody(t, h2Limits)
	stop := make(chan struct{})
	defer close(stop)
	go busy(conn, 100_000, stop)
	go func() {
		time.Sleep(700 * time.Millisecond)
		_, _ = w.Write([]byte("late but honest"))
		w.Close()
	}()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "late but honest" {
		t.Fatalf("read %q, %v; want the whole body", b, err)
	}
}

// TestAnHTTP2BodyOnAQuietConnectionIsCut: with the connection as quiet as
// the stream, the limits apply as on HTTP/1, and the timer cuts the read.
func TestAnHTTP2BodyOnAQuietConnectionIsCut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits BodyLimits
		want   string
	}{
		{"rate", BodyLimits{MinRate: 1000, Grace: 200 * time.Millisecond}, "slower than"},
		{"idle", BodyLimits{Idle: 200 * time.Millisecond}, "sent nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, _ := sharedBody(t, tc.limits)
			go func() { _, _ = w.Write([]byte("x")) }() // then nothing
			start := time.Now()
			_, err := io.ReadAll(r)
			var slow *SlowBodyError
			if !errors.As(err, &slow) || !strings.Contains(slow.Reason, tc.want) {
				t.Fatalf("err %v, want a SlowBodyError that says %q", err, tc.want)
			}
			if took := time.Since(start); took < 200*time.Millisecond || took > 2*time.Second {
				t.Errorf("cut after %s, want soon after 200ms", took)
			}
		})
	}
}

// TestAnHTTP2TrickleIsCutThoughItsOwnBytesArrive: a connection that
// delivers only the stream's own trickle is as slow as the trickle.
func TestAnHTTP2TrickleIsCutThoughItsOwnBytesArrive(t *testing.T) {
	r, w, conn := sharedBody(t, h2Limits)
	go func() {
		for range 100 {
			conn.Add(1)
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond) // 50 bytes/s
		}
		w.Close()
	}()
	_, err := io.ReadAll(r)
	var slow *SlowBodyError
	if !errors.As(err, &slow) {
		t.Fatalf("err %v, want a SlowBodyError", err)
	}
}
