package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// BodyLimits bound how slowly a request body may arrive; a zero field is
// no limit of its kind.
type BodyLimits struct {
	// MinRate is the least average rate in bytes per second, checked once
	// Grace has passed.
	MinRate float64
	Grace   time.Duration
	// Idle is the longest one read may wait without a byte.
	Idle time.Duration
}

func (l BodyLimits) off() bool { return l.MinRate <= 0 && l.Idle <= 0 }

// SlowBodyError is the read error of a body cut off by its limits; it
// wraps os.ErrDeadlineExceeded, which the listeners answer 408.
type SlowBodyError struct{ Reason string }

func (e *SlowBodyError) Error() string { return "request body " + e.Reason }

func (e *SlowBodyError) Unwrap() error { return os.ErrDeadlineExceeded }

// Bodies wraps h so that each request body is read within limits. A
// request without a body (long-poll and SSE GETs among them) is untouched.
func Bodies(h http.Handler, limits BodyLimits) http.Handler {
	if limits.off() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rr := &rateReader{src: r.Body, deadlines: http.NewResponseController(w), limits: limits}
		switch {
		case r.ProtoMajor == 1:
			rr.header = w.Header()
		case r.ProtoMajor == 2:
			rr.shared = newSharedConn(connRead(r))
		}
		r.Body = rr
		defer rr.disarm()
		h.ServeHTTP(w, r)
	})
}

// readDeadliner is the part of http.ResponseController the reader uses.
type readDeadliner interface{ SetReadDeadline(time.Time) error }

// rateReader reads a body, setting before each read the deadline at which
// the read would break a limit. Only time spent inside Read counts: a
// handler busy between reads does not make its client slow.
type rateReader struct {
	src       io.ReadCloser
	deadlines readDeadliner
	limits    BodyLimits
	header    http.Header // HTTP/1 only: asks net/http to close the connection after the 408
	shared    *sharedConn // HTTP/2 only: the connection the body shares
	waited    time.Duration
	read      int64
	armed     bool
}

func (r *rateReader) Read(p []byte) (int, error) {
	if r.shared != nil {
		return r.readShared(p)
	}
	start := time.Now()
	deadline, reason := r.deadline(start, r.read)
	if !deadline.IsZero() && r.deadlines.SetReadDeadline(deadline) == nil {
		r.armed = true
	}
	n, err := r.src.Read(p)
	r.waited += time.Since(start)
	r.read += int64(n)
	if err == nil {
		return n, nil
	}
	// Done with the body: net/http's own background read must not inherit
	// the deadline, or it would cancel the request it serves.
	r.disarm()
	if errors.Is(err, os.ErrDeadlineExceeded) && reason != "" {
		if r.header != nil {
			r.header.Set("Connection", "close") // the rest of the body is still on the wire
		}
		return n, &SlowBodyError{Reason: reason}
	}
	return n, err
}

// deadline is the earlier of the two limits for a read starting at now,
// after progress bytes, and the reason that limit gives.
func (r *rateReader) deadline(now time.Time, progress int64) (time.Time, string) {
	at, reason := r.rateAt(now, progress)
	return r.idleAt(now, at, reason)
}

// rateAt is when a read starting at now, after progress bytes, breaks the
// minimum rate; zero if there is none.
func (r *rateReader) rateAt(now time.Time, progress int64) (time.Time, string) {
	rate := r.limits.MinRate
	if rate <= 0 {
		return time.Time{}, ""
	}
	allowed := max(r.limits.Grace, time.Duration(float64(progress)/rate*float64(time.Second)))
	return now.Add(allowed - r.waited), fmt.Sprintf("arrived slower than %g bytes/s", rate)
}

// idleAt is the earlier of at and the idle limit counted from the last
// byte, with its reason.
func (r *rateReader) idleAt(lastByte, at time.Time, reason string) (time.Time, string) {
	if idle := r.limits.Idle; idle > 0 && (at.IsZero() || lastByte.Add(idle).Before(at)) {
		return lastByte.Add(idle), fmt.Sprintf("sent nothing for %s", idle)
	}
	return at, reason
}

func (r *rateReader) disarm() {
	if r.armed {
		r.armed = false
		_ = r.deadlines.SetReadDeadline(time.Time{})
	}
}

func (r *rateReader) Close() error {
	r.disarm()
	return r.src.Close()
}
