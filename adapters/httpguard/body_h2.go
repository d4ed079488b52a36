package httpguard

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// sharedConn is what an HTTP/2 body knows of its connection. The streams
// of one connection share its bandwidth and its flow-control window, so a
// stream may wait for bytes while the client sends others': an HTTP/2
// body is slow only when its whole connection is. Its limits count the
// bytes the connection delivered while the body waited, and a timer
// checks them during each read, since a stream's read deadline, once
// passed, ends the stream.
type sharedConn struct {
	read *atomic.Int64 // the connection's bytes; when unknown, a count of its own that stays 0

	mu        sync.Mutex
	timer     *time.Timer
	reading   bool
	readStart time.Time
	base      int64     // the connection's bytes when the read started
	progress  int64     // bytes the connection delivered during earlier reads
	lastByte  time.Time // when a read last saw the connection deliver a byte
	lastCount int64     // the connection's bytes during this read when last looked at
	cutReason string
}

func newSharedConn(read *atomic.Int64) *sharedConn {
	if read == nil {
		read = new(atomic.Int64)
	}
	return &sharedConn{read: read}
}

func (r *rateReader) readShared(p []byte) (int, error) {
	c := r.shared
	c.begin(r)
	n, err := r.src.Read(p)
	r.read += int64(n)
	c.end(r, n)
	if err == nil {
		return n, nil
	}
	c.stop()
	if reason := c.cut(); reason != "" && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, &SlowBodyError{Reason: reason}
	}
	return n, err
}

// begin starts a read, and the check of its limits.
func (c *sharedConn) begin(r *rateReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.reading, c.readStart, c.base, c.lastCount = true, now, c.read.Load(), 0
	if c.lastByte.IsZero() {
		c.lastByte = now
	}
	c.arm(r, now)
}

// end closes a read of n bytes of the body itself.
func (c *sharedConn) end(r *rateReader, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	delivered := max(c.read.Load()-c.base, int64(n)) // own bytes count even if the count is another's
	c.progress += delivered
	r.waited += now.Sub(c.readStart)
	if delivered > 0 {
		c.lastByte = now
	}
	c.reading = false
	if c.timer != nil {
		c.timer.Stop()
	}
}

// arm sets the timer for the moment the read in progress would break a
// limit, if the connection delivers nothing more; c.mu is held.
func (c *sharedConn) arm(r *rateReader, now time.Time) {
	at, _ := c.limitAt(r, now)
	if at.IsZero() {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(time.Until(at), func() { c.check(r) })
		return
	}
	c.timer.Reset(time.Until(at))
}

// limitAt is when the read in progress breaks a limit, and which.
func (c *sharedConn) limitAt(r *rateReader, now time.Time) (time.Time, string) {
	during := c.read.Load() - c.base
	if during != c.lastCount {
		c.lastCount, c.lastByte = during, now
	}
	at, reason := r.rateAt(c.readStart, c.progress+during)
	return r.idleAt(c.lastByte, at, reason)
}

// check runs when a limit may have been broken: it cuts the read if the
// connection is slow, and otherwise looks again when it next could be.
func (c *sharedConn) check(r *rateReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reading {
		return
	}
	now := time.Now()
	at, reason := c.limitAt(r, now)
	if at.After(now) {
		c.timer.Reset(at.Sub(now))
		return
	}
	c.cutReason = reason
	_ = r.deadlines.SetReadDeadline(now)
}

func (c *sharedConn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
}

func (c *sharedConn) cut() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cutReason
}
