package httpguard

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// pipeBody is a rateReader over one end of a pipe, whose deadlines are
// the pipe's own; the test writes the body into the other end.
func pipeBody(t *testing.T, limits BodyLimits) (*rateReader, net.Conn) {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	return &rateReader{src: server, deadlines: server, limits: limits}, client
}

// trickle writes n bytes, one every gap, then closes.
func trickle(w net.Conn, n int, gap time.Duration) {
	for range n {
		if _, err := w.Write([]byte{'x'}); err != nil {
			return
		}
		time.Sleep(gap)
	}
	w.Close()
}

func TestRateReaderCutsATrickle(t *testing.T) {
	r, w := pipeBody(t, BodyLimits{MinRate: 1000, Grace: 200 * time.Millisecond, Idle: time.Second})
	go trickle(w, 100, 20*time.Millisecond) // 50 bytes/s
	start := time.Now()
	_, err := io.ReadAll(r)
	var slow *SlowBodyError
	if !errors.As(err, &slow) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err %v, want a SlowBodyError", err)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > time.Second {
		t.Errorf("cut after %s, want after the 200ms grace and well before the body ends", took)
	}
	t.Log(slow)
}

func TestRateReaderCutsAStall(t *testing.T) {
	r, w := pipeBody(t, BodyLimits{Idle: 150 * time.Millisecond})
	go func() { _, _ = w.Write([]byte("some")) }() // then nothing
	start := time.Now()
	_, err := io.ReadAll(r)
	var slow *SlowBodyError
	if !errors.As(err, &slow) || time.Since(start) > time.Second {
		t.Fatalf("err %v after %s, want a SlowBodyError after 150ms", err, time.Since(start))
	}
}

// TestRateReaderLetsHonestBodiesThrough: a body above the rate, and one
// whose reader pauses between reads (the handler's time, not the
// client's), read whole; the deadline is cleared at the end.
func TestRateReaderLetsHonestBodiesThrough(t *testing.T) {
	r, w := pipeBody(t, BodyLimits{MinRate: 100, Grace: 100 * time.Millisecond, Idle: 200 * time.Millisecond})
	go trickle(w, 30, 5*time.Millisecond) // 200 bytes/s
	buf := make([]byte, 1)
	got := 0
	for {
		n, err := r.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", got, err)
		}
		time.Sleep(10 * time.Millisecond) // slower than the client: not its fault
	}
	if got != 30 || r.armed {
		t.Errorf("read %d bytes, armed %v", got, r.armed)
	}
}

func TestRateReaderOffPassesThrough(t *testing.T) {
	r, w := pipeBody(t, BodyLimits{})
	go trickle(w, 3, 50*time.Millisecond)
	if b, err := io.ReadAll(r); err != nil || len(b) != 3 || r.armed {
		t.Errorf("read %q, %v, armed %v", b, err, r.armed)
	}
}
