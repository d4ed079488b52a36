package livehttp

import (
	"errors"
	"fmt"
	"os"

	"github.com/picomq/pico/ports"
)

// Parking bounds the live reads parked on the node at once, counted here
// for both protocols: a long-poll from when it first waits, an event
// stream for as long as it lasts. A nil Parking has no bound.
type Parking interface {
	Park() bool // false at the bound
	Leave()
}

// ErrTooManyLiveReaders answers a live read over the bound: unavailable
// (503, Retry-After), as the node is busy, not the request wrong.
var ErrTooManyLiveReaders = fmt.Errorf("%w: this node has as many live readers as it takes (--max-live-readers); retry", ports.ErrUnavailable)

// Enter parks a live read, returning the leave to defer, or
// ErrTooManyLiveReaders.
func Enter(p Parking) (leave func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	if !p.Park() {
		return nil, ErrTooManyLiveReaders
	}
	return p.Leave, nil
}

// BodyTimedOut reports whether a body read failed on its read deadline:
// the client sent too slowly, or stalled (408).
func BodyTimedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
