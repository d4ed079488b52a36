package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Errors of the engine's stream operations.
var (
	ErrNotFound = errors.New("engine: stream not found")
	// ErrNotOwner: another live process writes the stream.
	ErrNotOwner = errors.New("engine: stream is open on another node")
	// ErrNotLocal: the stream is not open on this process; Open it first.
	ErrNotLocal = errors.New("engine: stream not open here")
	// ErrProducerFenced: a producer epoch below the stream's current one.
	ErrProducerFenced = errors.New("engine: stale producer epoch")
	// ErrProducerGap: a producer sequence beyond the next expected one.
	ErrProducerGap = errors.New("engine: producer sequence gap")
)

// Config wires an Engine.
type Config struct {
	Plane  *meta.Plane
	By     domain.Proposer // this process
	Store  ports.ObjectStore
	WAL    *WAL
	Logger *slog.Logger
	Now    func() time.Time
}

// Engine serves the streams this process writes.
type Engine struct {
	cfg     Config
	mu      sync.Mutex
	streams map[uint64]*stream
	opening sync.Mutex // one recovery at a time keeps fencing simple
}

// New returns an engine with no open streams.
func New(cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Engine{cfg: cfg, streams: map[uint64]*stream{}}
}

func (e *Engine) local(id uint64) (*stream, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.streams[id]
	return s, ok
}

// Open makes this process the writer of stream id. If another process wrote
// it and is gone (restarted or fenced), Open fences that process's WAL and
// recovers every record it acknowledged, rewriting them into this process's
// WAL before any new append is accepted.
func (e *Engine) Open(ctx context.Context, id uint64) error {
	if s, ok := e.local(id); ok && s.failed == nil {
		return nil
	}
	e.opening.Lock()
	defer e.opening.Unlock()
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok {
		return ErrNotFound
	}
	if v.IsOpen(st) && st.Owner == e.cfg.By.Node && st.OwnerEpoch == e.cfg.By.Epoch {
		// Opened by this process (at create) and not yet written here.
		e.mu.Lock()
		defer e.mu.Unlock()
		if _, ok := e.streams[id]; !ok {
			e.streams[id] = newStream(id, st.Epoch, st.End)
		}
		return nil
	}
	if n, alive := v.Node(st.Owner); alive && !st.Open && n.Epoch == st.OwnerEpoch {
		// Closed by a live writer: its records are not all in data objects
		// yet, and fencing its WAL would stop its other streams.
		return fmt.Errorf("engine: stream %d was closed by live node %d; handoff needs data objects", id, st.Owner)
	}
	prev := *st
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.OpenStream{By: e.cfg.By, Stream: id, Epoch: st.Epoch + 1})
	if err != nil {
		return err
	}
	switch r.Code {
	case domain.ResultOK:
	case domain.ResultNotClosed:
		return fmt.Errorf("%w: %s", ErrNotOwner, r.Reason)
	case domain.ResultNotFound:
		return ErrNotFound
	default:
		return fmt.Errorf("engine: open stream %d: %s", id, r)
	}
	return e.recover(ctx, &prev, st.Epoch+1)
}

// recover rebuilds a stream opened at epoch from its previous writer's WAL.
func (e *Engine) recover(ctx context.Context, prev *domain.Stream, epoch uint64) error {
	s := newStream(prev.ID, epoch, prev.End)
	if prev.Owner != 0 && prev.OwnerEpoch != 0 {
		frames, err := FenceWAL(ctx, e.cfg.Store, prev.Owner, prev.OwnerEpoch, e.cfg.By)
		if err != nil {
			return fmt.Errorf("engine: recover stream %d: %w", prev.ID, err)
		}
		s.load(framesOf(frames, prev.ID))
	}
	if s.next > prev.End {
		if err := e.rewrite(ctx, s, prev.End); err != nil {
			return err
		}
	}
	e.mu.Lock()
	e.streams[prev.ID] = s
	e.mu.Unlock()
	e.cfg.Logger.Debug("stream opened", "stream", prev.ID, "epoch", epoch, "recovered", s.next-prev.End)
	return nil
}

// rewrite makes recovered records durable in this process's own WAL, so the
// next takeover needs to read only one predecessor.
func (e *Engine) rewrite(ctx context.Context, s *stream, from uint64) error {
	f := &domain.Frame{Stream: s.id, Epoch: s.epoch, Offset: from, Records: s.records[from-s.base:]}
	done := make(chan error, 1)
	if err := e.cfg.WAL.Submit(f, func(err error) { done <- err }); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func framesOf(frames []domain.Frame, id uint64) []domain.Frame {
	var out []domain.Frame
	for _, f := range frames {
		if f.Stream == id {
			out = append(out, f)
		}
	}
	return out
}
