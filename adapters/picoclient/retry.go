package picoclient

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// Retry bounds: the first wait, and the longest.
const (
	firstBackoff      = 50 * time.Millisecond
	defaultMaxBackoff = 2 * time.Second
)

// transient reports whether a request that failed with err may succeed if
// sent again unchanged: the node restarting, failing over or asking to
// wait, the network dropping or timing out. A refusal (4xx) stays a
// refusal, and so do a bad endpoint, a TLS failure and a redirect refused.
func transient(err error) bool {
	var api *APIError
	if errors.As(err, &api) {
		return api.Status >= 500 || api.Status == http.StatusTooManyRequests || api.Status == http.StatusRequestTimeout
	}
	var request *url.Error
	if errors.As(err, &request) {
		err = request.Err // a *url.Error is itself a net.Error: look inside
	}
	var op *net.OpError
	var timeout net.Error
	return errors.As(err, &op) || closedIdle(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &timeout) && timeout.Timeout()
}

// serverClosedIdle is net/http's error, unexported, for a kept-alive
// connection the server closed just as a request was handed to it: the
// server never read that request.
const serverClosedIdle = "http: server closed idle connection"

func closedIdle(err error) bool { return err != nil && err.Error() == serverClosedIdle }

// backoff is the wait between retries: doubling from firstBackoff to max,
// with jitter, and never shorter than what the server asked for.
type backoff struct {
	next, max time.Duration
}

func newBackoff(max time.Duration) backoff {
	if max <= 0 {
		max = defaultMaxBackoff
	}
	return backoff{next: min(firstBackoff, max), max: max}
}

// wait sleeps before the retry of a request that failed with err, or
// returns ctx's error.
func (b *backoff) wait(ctx context.Context, err error) error {
	d := b.next/2 + rand.N(b.next/2+1)
	var api *APIError
	if errors.As(err, &api) && api.RetryAfter > d {
		d = api.RetryAfter
	}
	b.next = min(2*b.next, b.max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reset starts the waits over after a success.
func (b *backoff) reset() { b.next = min(firstBackoff, b.max) }
