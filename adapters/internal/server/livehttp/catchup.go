package livehttp

import (
	"context"

	"github.com/picomq/pico/ports"
)

// Scheduler puts catch-up pages behind appends across both protocols
// (httpguard.CatchUp). A nil Scheduler lets everything through.
type Scheduler interface {
	// Foreground counts an append as running until done is called.
	Foreground() (done func())
	// Turn waits for a turn to serve a catch-up page of n bytes.
	Turn(ctx context.Context, n int) (release func(), err error)
}

// Foreground counts an append on s until the returned done is called.
func Foreground(s Scheduler) (done func()) {
	if s == nil {
		return func() {}
	}
	return s.Foreground()
}

// PageTurn waits for the turn of a catch-up page, one whose records do not
// reach the stream's tail, and returns the release to call once it is
// written; any other page goes at once.
func PageTurn(ctx context.Context, s Scheduler, res ports.ReadResult) (release func(), err error) {
	if s == nil || res.UpToDate || len(res.Records) == 0 {
		return func() {}, nil
	}
	n := 0
	for _, r := range res.Records {
		n += len(r.Body)
	}
	return s.Turn(ctx, n)
}
