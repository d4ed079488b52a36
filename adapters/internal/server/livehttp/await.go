// Package livehttp holds the HTTP mechanics that both stream protocols need
// and neither defines: waiting for records (long-poll), writing server-sent
// events, and reading bounded request bodies. It knows nothing of either
// wire format, so the Pico and Durable Streams listeners share it.
package livehttp

import (
	"context"
	"errors"
	"time"

	"github.com/picomq/pico/ports"
)

// AwaitRecords reads until there is something to answer: records, a closed
// stream, a page short of the tail, or an error. Between reads it waits on
// the page's Changed channel; after timeout or when stop closes it reads a
// last time, and when ctx ends it returns the last (empty) page, or the
// cause when the gate ended it (ports.ErrUnauthenticated: the grant no
// longer holds). It parks on park before it first waits, and answers
// ErrTooManyLiveReaders if that is full.
func AwaitRecords(ctx context.Context, stop <-chan struct{}, timeout time.Duration, park Parking,
	read func() (ports.ReadResult, error)) (ports.ReadResult, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	parked := false
	for {
		res, err := read()
		if err != nil || len(res.Records) > 0 || res.Closed || !res.UpToDate {
			return res, err
		}
		if !parked {
			leave, err := Enter(park)
			if err != nil {
				return res, err
			}
			defer leave()
			parked = true
		}
		select {
		case <-res.Changed:
			// Something changed (maybe not our range): read again.
		case <-timer.C:
			return read()
		case <-stop:
			return read()
		case <-ctx.Done():
			if cause := context.Cause(ctx); errors.Is(cause, ports.ErrUnauthenticated) {
				return res, cause // the grant no longer holds (a revocation): a 401, not an empty page
			}
			return res, nil
		}
	}
}
