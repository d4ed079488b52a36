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

	dice *Dice
	// stall, while non-nil, holds every call until it is closed.
	stall atomic.Pointer[chan struct{}]

	counts [numOps]struct{ calls, failed, ambiguous, delayed atomic.Int64 }
}

var _ ports.ObjectStore = (*Store)(nil)

// New wraps inner with the faults of cfg, enabled.
func New(inner ports.ObjectStore, cfg Config) *Store {
	s := &Store{inner: inner, cfg: cfg, dice: NewDice(cfg.Seed)}
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

// SetStalled holds every call from now on, whatever the faults, until it
// is called again with false: the calls then go on as they were, as the
// requests of a paused process do when it resumes.
func (s *Store) SetStalled(on bool) {
	if on {
		ch := make(chan struct{})
		s.stall.CompareAndSwap(nil, &ch)
		return
	}
	if ch := s.stall.Swap(nil); ch != nil {
		close(*ch)
	}
}

// held waits while the store is stalled.
func (s *Store) held(ctx context.Context) error {
	ch := s.stall.Load()
	if ch == nil {
		return nil
	}
	select {
	case <-*ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("faultstore: stalled: %w", ctx.Err())
	}
}

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

// Plan is what happens to one call.
type Plan struct {
	Delay     time.Duration
	Fail      bool
	Ambiguous bool
}

// Dice draws the plans of calls from one seeded sequence. Safe for
// concurrent use.
type Dice struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewDice returns dice that draw the same plans for the same seed and calls.
func NewDice(seed uint64) *Dice {
	return &Dice{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Roll draws the plan of one call with faults f.
func (d *Dice) Roll(f Faults) Plan {
	// Every call draws the same numbers, so one fault's probability does not
	// shift the others' sequence.
	d.mu.Lock()
	delayed, fail, ambiguous := d.rng.Float64() < f.Delay, d.rng.Float64() < f.Fail, d.rng.Float64() < f.Ambiguous
	delay := d.rng.Int64N(max(int64(f.MaxDelay), 1)) + 1
	d.mu.Unlock()
	p := Plan{Fail: fail, Ambiguous: ambiguous && !fail}
	if delayed && f.MaxDelay > 0 {
		p.Delay = time.Duration(delay)
	}
	return p
}

func (s *Store) draw(op Op) Plan {
	if !s.enabled.Load() {
		return Plan{}
	}
	p := s.dice.Roll(s.cfg.faults(op))
	c := &s.counts[op]
	c.calls.Add(1)
	if p.Delay > 0 {
		c.delayed.Add(1)
	}
	if p.Fail {
		c.failed.Add(1)
	}
	if p.Ambiguous {
		c.ambiguous.Add(1)
	}
	return p
}

// Before applies a plan's delay and failure to the call what; a non-nil
// error ends the call.
func (p Plan) Before(ctx context.Context, what string) error {
	if p.Delay > 0 {
		t := time.NewTimer(p.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("faultstore: %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
	if p.Fail {
		return fmt.Errorf("%w: %s failed", ErrInjected, what)
	}
	return nil
}

// After turns the result of a performed call into the caller's.
func (p Plan) After(what string, err error) error {
	if p.Ambiguous {
		return fmt.Errorf("%w: %s done, reported failed", ErrInjected, what)
	}
	return err
}

// Put implements ports.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	if err := s.held(ctx); err != nil {
		return err
	}
	p := s.draw(OpPut)
	if err := p.Before(ctx, OpPut.String()+" "+key); err != nil {
		return err
	}
	return p.After(OpPut.String()+" "+key, s.inner.Put(ctx, key, body))
}

// PutIfAbsent implements ports.ObjectStore.
func (s *Store) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if err := s.held(ctx); err != nil {
		return err
	}
	p := s.draw(OpPutIfAbsent)
	if err := p.Before(ctx, OpPutIfAbsent.String()+" "+key); err != nil {
		return err
	}
	return p.After(OpPutIfAbsent.String()+" "+key, s.inner.PutIfAbsent(ctx, key, body))
}

// Get implements ports.ObjectStore.
func (s *Store) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := s.held(ctx); err != nil {
		return nil, err
	}
	p := s.draw(OpGet)
	if err := p.Before(ctx, OpGet.String()+" "+key); err != nil {
		return nil, err
	}
	body, err := s.inner.Get(ctx, key, off, length)
	if err = p.After(OpGet.String()+" "+key, err); err != nil {
		return nil, err
	}
	return body, nil
}

// List implements ports.ObjectStore.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	if err := s.held(ctx); err != nil {
		return nil, err
	}
	p := s.draw(OpList)
	if err := p.Before(ctx, OpList.String()+" "+prefix); err != nil {
		return nil, err
	}
	infos, err := s.inner.List(ctx, prefix, after, limit)
	if err = p.After(OpList.String()+" "+prefix, err); err != nil {
		return nil, err
	}
	return infos, nil
}

// Delete implements ports.ObjectStore.
// One fault is drawn for the whole call. An ambiguous delete of several
// keys deletes every second one only, as a DeleteObjects request whose keys
// partly fail does, and reports the failure.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := s.held(ctx); err != nil {
		return err
	}
	p := s.draw(OpDelete)
	what := strings.Join(keys, ",")
	if err := p.Before(ctx, OpDelete.String()+" "+what); err != nil {
		return err
	}
	if p.Ambiguous && len(keys) > 1 {
		var part []string
		for i := 1; i < len(keys); i += 2 {
			part = append(part, keys[i])
		}
		keys = part
	}
	return p.After(OpDelete.String()+" "+what, s.inner.Delete(ctx, keys...))
}
