package conformance

import (
	"sync/atomic"
	"time"
)

// Clock is a settable clock for an implementation under test: a suite moves
// it to expire things without sleeping. It is safe for concurrent use.
type Clock struct{ ms atomic.Int64 }

// NewClock returns a clock that reads start until it is moved.
func NewClock(start time.Time) *Clock {
	c := &Clock{}
	c.ms.Store(start.UnixMilli())
	return c
}

// Now is the clock's time, to the millisecond.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// Advance moves the clock by d, backwards when d is negative.
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }
