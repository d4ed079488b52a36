package handlertest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// RecordingAuth is a ports.Authorizer that records what the gate asks and
// refuses with Err, or allows with the root scope; with EndHolds, a held
// grant ends 20 ms after the hold, as a revocation ends it.
type RecordingAuth struct {
	Err      error
	EndHolds bool

	mu   sync.Mutex
	reqs []ports.AuthRequest
	held int
}

func (a *RecordingAuth) Authorize(req ports.AuthRequest) (ports.Grant, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, req)
	if a.Err != nil {
		return ports.Grant{}, a.Err
	}
	return ports.Grant{TokenID: "t", Scope: domain.RootScope(), Rev: 1}, nil
}

func (a *RecordingAuth) Hold(ctx context.Context, _ ports.Grant) (context.Context, func()) {
	a.mu.Lock()
	a.held++
	a.mu.Unlock()
	held, cancel := context.WithCancelCause(ctx)
	if a.EndHolds {
		time.AfterFunc(20*time.Millisecond, func() { cancel(errors.Join(ports.ErrUnauthenticated, errors.New("revoked"))) })
	}
	return held, func() { cancel(context.Canceled) }
}

// Requests returns what the gate has asked so far.
func (a *RecordingAuth) Requests() []ports.AuthRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ports.AuthRequest(nil), a.reqs...)
}

// Holds counts the grants held so far.
func (a *RecordingAuth) Holds() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held
}
