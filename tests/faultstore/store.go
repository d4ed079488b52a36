// Package faultstore wraps a ports.ObjectStore with seeded, injected faults,
// for testing what is built on an object store against the failures of a
// real one: errors, latency, and operations that happened although the
// caller was told they failed.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/ports"
)

// ErrInjected is the error of every injected failure.
var ErrInjected = errors.New("faultstore: injected fault")

// Op is a kind of object store operation.
type Op int

// The operations, in the order of Config's fields.
const (
	OpPut Op = iota
	OpPutIfAbsent
	OpGet
	OpList
	OpDelete
	numOps
)

var opNames = [numOps]string{"put", "put-if-absent", "get", "list", "delete"}

func (o Op) String() string {
	if o < 0 || o >= numOps {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// Faults are the probabilities, each in [0, 1], of the faults injected into
// one kind of operation. They are drawn independently per call: a call may
// be delayed and then fail.
type Faults struct {
	// Fail: return ErrInjected without doing anything.
	Fail float64
	// Ambiguous: do the operation, discard its result, and return
	// ErrInjected, as when a response is lost.
	Ambiguous float64
	// Delay: wait a random time up to MaxDelay before the operation (or
	// until the context ends, which fails the call).
	Delay    float64
	MaxDelay time.Duration
}

// Config sets the faults of each kind of operation.
type Config struct {
	Seed                                uint64 // the same seed and calls give the same faults
	Put, PutIfAbsent, Get, List, Delete Faults
}

func (c Config) faults(op Op) Faults {
	return [numOps]Faults{c.Put, c.PutIfAbsent, c.Get, c.List, c.Delete}[op]
}

// Counts are the faults injected into one kind of operation.
type Counts struct {
	Calls     int64 // calls made while faults were enabled
	Failed    int64
	Ambiguous int64
	Delayed   int64
}

// Store is a ports.ObjectStore that injects faults into calls to another.
// Safe for concurrent use; with concurrent callers, which call draws which
// fault depends on their interleaving.
type Store struct {
	inner   ports.ObjectStore
	cfg     Config
	enabled atomic.Bool

	mu  sync.Mutex
	rng *rand.Rand

	counts [numOps]struct{ calls, failed, ambiguous, delayed atomic.Int64 }
}

var _ ports.ObjectStore = (*Store)(nil)

// New wraps inner with the faults of cfg, enabled.
func New(inner ports.ObjectStore, cfg Config) *Store {
	s := &Store{inner: inner, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	s.enabled.Store(true)
	return s
}

// Outage wraps inner in a store whose every write fails while its faults
// are enabled, as in an outage of the store or of the network to it; it
// starts disabled, with the store up.
func Outage(inner ports.ObjectStore) *Store {
	s := New(inner, Config{Put: Faults{Fail: 1}, PutIfAbsent: Faults{Fail: 1}})
	s.SetEnabled(false)
	return s
}

// SetEnabled turns fault injection on or off; while off, calls go straight
// to the inner store and draw no random numbers.
func (s *Store) SetEnabled(on bool) { s.enabled.Store(on) }

// Enabled reports whether faults are being injected.
func (s *Store) Enabled() bool { return s.enabled.Load() }

// Inner returns the wrapped store, to inspect what really happened.
func (s *Store) Inner() ports.ObjectStore { return s.inner }

// Counts returns the faults injected so far into op.
func (s *Store) Counts(op Op) Counts {
	c := &s.counts[op]
	return Counts{Calls: c.calls.Load(), Failed: c.failed.Load(), Ambiguous: c.ambiguous.Load(), Delayed: c.delayed.Load()}
}

// Total returns the faults injected so far into all operations.
func (s *Store) Total() Counts {
	var t Counts
	for op := range numOps {
		c := s.Counts(op)
		t.Calls += c.Calls
		t.Failed += c.Failed
		t.Ambiguous += c.Ambiguous
		t.Delayed += c.Delayed
	}
	return t
}

// plan is what happens to one call.
type plan struct {
	delay     time.Duration
	fail      bool
	ambiguous bool
}

func (s *Store) draw(op Op) plan {
	if !s.enabled.Load() {
		return plan{}
	}
	f := s.cfg.faults(op)
	// Every call draws the same numbers, so one fault's probability does not
	// shift the others' sequence.
	s.mu.Lock()
	delayed, fail, ambiguous := s.rng.Float64() < f.Delay, s.rng.Float64() < f.Fail, s.rng.Float64() < f.Ambiguous
	delay := s.rng.Int64N(max(int64(f.MaxDelay), 1)) + 1
	s.mu.Unlock()
	p := plan{fail: fail, ambiguous: ambiguous && !fail}
	if delayed && f.MaxDelay > 0 {
		p.delay = time.Duration(delay)
	}

	c := &s.counts[op]
	c.calls.Add(1)
	if p.delay > 0 {
		c.delayed.Add(1)
	}
	if p.fail {
		c.failed.Add(1)
	}
	if p.ambiguous {
		c.ambiguous.Add(1)
	}
	return p
}

// before applies a plan's delay and failure; a non-nil error ends the call.
func (p plan) before(ctx context.Context, op Op, key string) error {
	if p.delay > 0 {
		t := time.NewTimer(p.delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("faultstore: %s %s: %w", op, key, ctx.Err())
		case <-t.C:
		}
	}
	if p.fail {
		return fmt.Errorf("%w: %s %s failed", ErrInjected, op, key)
	}
	return nil
}

// after turns the result of a performed call into the caller's.
func (p plan) after(op Op, key string, err error) error {
	if p.ambiguous {
		return fmt.Errorf("%w: %s %s done, reported failed", ErrInjected, op, key)
	}
	return err
}

// Put implements ports.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	p := s.draw(OpPut)
	if err := p.before(ctx, OpPut, key); err != nil {
		return err
	}
	return p.after(OpPut, key, s.inner.Put(ctx, key, body))
}

// PutIfAbsent implements ports.ObjectStore.
func (s *Store) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	p := s.draw(OpPutIfAbsent)
	if err := p.before(ctx, OpPutIfAbsent, key); err != nil {
		return err
	}
	return p.after(OpPutIfAbsent, key, s.inner.PutIfAbsent(ctx, key, body))
}

// Get implements ports.ObjectStore.
func (s *Store) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	p := s.draw(OpGet)
	if err := p.before(ctx, OpGet, key); err != nil {
		return nil, err
	}
	body, err := s.inner.Get(ctx, key, off, length)
	if err = p.after(OpGet, key, err); err != nil {
		return nil, err
	}
	return body, nil
}

// List implements ports.ObjectStore.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	p := s.draw(OpList)
	if err := p.before(ctx, OpList, prefix); err != nil {
		return nil, err
	}
	infos, err := s.inner.List(ctx, prefix, after, limit)
	if err = p.after(OpList, prefix, err); err != nil {
		return nil, err
	}
	return infos, nil
}

// Delete implements ports.ObjectStore.
// One fault is drawn for the whole call. An ambiguous delete of several
// keys deletes every second one only, as a DeleteObjects request whose keys
// partly fail does, and reports the failure.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	p := s.draw(OpDelete)
	what := strings.Join(keys, ",")
	if err := p.before(ctx, OpDelete, what); err != nil {
		return err
	}
	if p.ambiguous && len(keys) > 1 {
		var part []string
		for i := 1; i < len(keys); i += 2 {
			part = append(part, keys[i])
		}
		keys = part
	}
	return p.after(OpDelete, what, s.inner.Delete(ctx, keys...))
}
