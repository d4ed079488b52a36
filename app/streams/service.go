package streams

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Config wires a Service.
type Config struct {
	Plane  *meta.Plane
	Engine *engine.Engine
	By     domain.Proposer // this node process
	// Address is this node's advertised base URL; a stream whose owner has
	// this address is served here.
	Address string
	Now     func() time.Time
	Logger  *slog.Logger
	// Place has new streams placed by the metadata log on the node with
	// the fewest streams per slot (place.go); off, they are made on this
	// node, which serves every stream where it is asked.
	Place bool
	// Serving, when set, says whether this process may still answer for
	// the streams it writes (nil: it may); every operation on a stream
	// open here asks it first, and again once it has decided a refusal or
	// a read.
	Serving func() error
	// Schemas compiles registered schemas for the streams that validate
	// against one; nil refuses every schema.
	Schemas ports.SchemaCompiler
}

// Service implements ports.Streams on the engine.
type Service struct {
	cfg     Config
	access  accessTimes
	configs configCache
	// unowned is the lease holder's memory of streams its last sweep found
	// unowned (see idleSinceUnowned); only that sweep uses it.
	unowned unownedSince
	schemas validators
	// hooks let tests act at points of a takeover; nil outside tests.
	hooks reclaimHooks
}

var _ ports.Streams = (*Service)(nil)

// New returns a service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{cfg: cfg}
}

// Route returns the base URL of the node serving name, or "" for this one:
// a stream open on another live node is served there, and one being
// transferred, by the transfer's target, once its writer lets it go (the
// target itself serves it at once: its open waits for that, awaitLetGo);
// any other stream nobody holds open is served wherever it is asked for,
// which revives it here.
func (s *Service) Route(name string) (*ports.RedirectError, error) {
	v := s.cfg.Plane.View()
	st, ok := v.StreamByName(name)
	if !ok {
		return nil, nil
	}
	return s.ownerRedirect(&v, st), nil
}

// ownerRedirect is the redirect to the node that serves st, nil for this
// one or none.
func (s *Service) ownerRedirect(v *domain.State, st *domain.Stream) *ports.RedirectError {
	owner := v.PendingTransfer(st)
	if v.IsOpen(st) && owner != s.cfg.By.Node {
		owner = st.Owner // which serves it until it lets go
	}
	return s.nodeRedirect(v, owner)
}

// nodeRedirect is the redirect to node id, with the address of each of
// its listeners; nil for this node or one without an address.
func (s *Service) nodeRedirect(v *domain.State, id domain.NodeID) *ports.RedirectError {
	if id == 0 || id == s.cfg.By.Node {
		return nil
	}
	n, ok := v.Node(id)
	if !ok || n.Address == "" || n.Address == s.cfg.Address {
		return nil
	}
	return &ports.RedirectError{Address: n.Address, Listeners: v.Listeners(id)}
}

// letGoWait bounds how long a request at a transfer's target waits for
// the stream's writer to let it go: a close commits the writer's records
// first, one upload. Tests shorten it.
var letGoWait = 5 * time.Second

// awaitLetGo waits while stream st is being transferred to this node and
// another node still writes it, until that node's close reaches this
// node's view, letGoWait at most. The writer answers a request once it
// has let go with a redirect here; a target that sent it back while its
// view lagged would bounce the client between the two for as long as the
// lag lasts.
func (s *Service) awaitLetGo(ctx context.Context, st stream) {
	if st.TransferTo != s.cfg.By.Node || st.Owner == s.cfg.By.Node {
		return // as the request's view had it: no transfer here from elsewhere
	}
	deadline := time.Now().Add(letGoWait)
	for {
		v := s.cfg.Plane.View()
		cur, ok := v.Stream(st.ID)
		if !ok || !v.IsOpen(cur) || cur.Owner == s.cfg.By.Node || v.PendingTransfer(cur) != s.cfg.By.Node || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// stream is a looked-up stream with its decoded config.
type stream struct {
	*domain.Stream
	cfg domain.StreamConfig
}

// lookup finds a live stream by name; an expired one counts as gone (the
// retention sweep deletes it).
func (s *Service) lookup(ctx context.Context, name string) (stream, error) {
	st, err := s.find(name)
	if !errors.Is(err, ports.ErrStreamNotFound) {
		return st, err
	}
	if err := s.cfg.Plane.CatchUp(ctx); err != nil {
		return stream{}, ports.Errorf(ports.ErrUnavailable, "confirming that %s does not exist: %v", name, err)
	}
	return s.find(name)
}

// find looks name up in the view as it is.
func (s *Service) find(name string) (stream, error) {
	v := s.cfg.Plane.View()
	st, ok := v.StreamByName(name)
	if !ok {
		return stream{}, ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", name)
	}
	return s.live(st)
}

// live decodes a stream of the view, refusing one that is soft-deleted or
// expired.
func (s *Service) live(st *domain.Stream) (stream, error) {
	cfg, err := s.configs.decode(st.ID, st.Meta)
	if err != nil {
		return stream{}, err
	}
	if st.SoftDeleted {
		return stream{}, ports.Errorf(ports.ErrStreamGone, "stream %s is deleted (kept for its forks)", st.Name)
	}
	if s.expired(st, cfg) {
		return stream{}, ports.Errorf(ports.ErrStreamNotFound, "stream expired: %s", st.Name)
	}
	if cfg.IdleTTLSec > 0 && s.access.reclaimStep(st.ID) == doomed { // only idle-TTL streams are reclaimed
		return stream{}, ports.Errorf(ports.ErrUnavailable, "stream %s is being expired: try again", st.Name)
	}
	return stream{st, cfg}, nil
}

// touch looks a stream up for a read or write: the access renews its idle
// TTL.
func (s *Service) touch(ctx context.Context, name string) (stream, error) {
	return s.accessed(s.lookup(ctx, name))
}

// named runs op on the stream that name names, found by look. A view
// that lags may still name a stream deleted since and made again under
// the name: the engine finds that stream gone, and op runs once more on
// the stream the caught-up log names.
func (s *Service) named(ctx context.Context, name string, look func(context.Context, string) (stream, error), op func(stream) error) error {
	st, err := look(ctx, name)
	if err != nil {
		return err
	}
	err = op(st)
	if !errors.Is(err, ports.ErrStreamNotFound) || s.cfg.Plane.CatchUp(ctx) != nil {
		return err
	}
	if now, found := look(ctx, name); found == nil && now.ID != st.ID {
		return op(now)
	}
	return err
}

// touchView is touch on the view as it is, for creates: they settle a
// name missing from a lagging view by proposing, so confirming the miss
// against the log first would cost every new stream a read.
func (s *Service) touchView(name string) (stream, error) {
	return s.accessed(s.find(name))
}

// accessed counts an access to a stream found.
func (s *Service) accessed(st stream, err error) (stream, error) {
	if err == nil && st.cfg.IdleTTLSec > 0 {
		s.access.touch(st.ID, s.cfg.Now().UnixMilli())
	}
	return st, err
}

// expired: past its absolute expiry, or idle for longer than its idle TTL.
// Access times live in the memory of the stream's writer, so the writer
// judges an idle TTL; elsewhere only the time a writer recorded when it let
// the stream go counts (see HandOff). A stream opened here (after a restart
// or a handoff) counts as accessed when it was opened: a move can lengthen
// an idle TTL but never cuts one short.
func (s *Service) expired(st *domain.Stream, cfg domain.StreamConfig) bool {
	now := s.cfg.Now().UnixMilli()
	if cfg.ExpiresAtMs != 0 && now >= cfg.ExpiresAtMs {
		return true
	}
	if cfg.IdleTTLSec == 0 {
		return false
	}
	if !s.isLocal(st.ID) {
		// This process saw none of its accesses: only the last access
		// its writer recorded on letting it go counts, and only while
		// nobody holds it and nobody has written it since (a new writer
		// starts its window again, at a higher epoch).
		v := s.cfg.Plane.View()
		recorded := cfg.AccessedAtMs > 0 && cfg.AccessedAtEpoch == st.Epoch
		return recorded && !v.IsOpen(st) && now > cfg.AccessedAtMs+int64(cfg.IdleTTLSec)*1000
	}
	if s.access.reclaimStep(st.ID) != notReclaiming {
		return false // the takeover decides (see reclaim)
	}
	last := max(st.CreatedMs, s.access.last(st.ID))
	return now > last+int64(cfg.IdleTTLSec)*1000
}

func (s *Service) isLocal(id uint64) bool {
	_, ok := s.cfg.Engine.Held(id)
	return ok
}

// open makes this process the stream's writer if it is not already and
// returns its handle. A stream open on another live node is a redirect to
// it.
func (s *Service) open(ctx context.Context, st stream) (engine.Handle, error) {
	if r := s.placeRevival(ctx, st); r != nil {
		return engine.Handle{}, r
	}
	s.awaitLetGo(ctx, st)
	h, err := s.cfg.Engine.Open(ctx, st.ID)
	if err != nil {
		return h, s.engineError(st, err)
	}
	if h.Opened && st.cfg.IdleTTLSec > 0 {
		s.access.touch(st.ID, s.cfg.Now().UnixMilli()) // the idle window starts here
	}
	return h, nil
}

// openAnd opens st here and runs op, which returns an engine error. If the
// engine let st go between the two, op did nothing (engine.ErrNotLocal is
// returned before any effect): st is opened again and op runs once more,
// as it does once a close or delete under way here settles
// (engine.ErrEnding).
// A dead-WAL takeover closes the streams it recovers right away (and a
// shutdown's hand-off closes them all); without this, a request racing the
// close would get a 503.
//
// Serving is asked before op and, for a refusal, after it: a refusal is
// final only if this process still served once it was decided, however
// long op took (a pause, a wait for memory). Reads ask again themselves.
func (s *Service) openAnd(ctx context.Context, st stream, op func(engine.Handle) error) error {
	if err := s.serving(); err != nil {
		return err
	}
	for retried := false; ; retried = true {
		h, err := s.open(ctx, st)
		if err != nil {
			return err
		}
		err = op(h)
		if errors.Is(err, engine.ErrEnding) && !retried {
			// A close or delete here is deciding the stream's fate: once
			// it is known, the stream is opened again (or found gone).
			if werr := h.AwaitSettled(ctx); werr != nil {
				return ports.Errorf(ports.ErrUnavailable, "stream %s is being closed or deleted: %v", st.Name, werr)
			}
			continue
		}
		if err == nil || retried || !errors.Is(err, engine.ErrNotLocal) {
			if err != nil {
				if lapsed := s.serving(); lapsed != nil {
					return lapsed
				}
			}
			return s.engineError(st, err)
		}
	}
}

// serving is Config.Serving, nil without one.
func (s *Service) serving() error {
	if s.cfg.Serving == nil {
		return nil
	}
	return s.cfg.Serving()
}

// engineError maps an engine error on stream st to the service's errors.
func (s *Service) engineError(st stream, err error) error {
	if err == nil {
		return nil // before the errors.As below, which allocates its target
	}
	switch {
	case errors.Is(err, engine.ErrPinned):
		return ports.Errorf(ports.ErrStreamConflict, "stream %s has forks reading its records: it cannot be trimmed", st.Name)
	case errors.Is(err, engine.ErrNotFound):
		return ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", st.Name)
	case errors.Is(err, engine.ErrNotOwner):
		v := s.cfg.Plane.View()
		if cur, ok := v.Stream(st.ID); ok {
			r := s.ownerRedirect(&v, cur)
			if r == nil && v.IsOpen(cur) {
				r = s.nodeRedirect(&v, cur.Owner) // a transfer here its writer has not let go of
			}
			if r != nil {
				return r
			}
		}
		return ports.Errorf(ports.ErrUnavailable, "stream %s is served by another node", st.Name)
	case errors.Is(err, engine.ErrNotDurable):
		return ports.Errorf(ports.ErrUnavailable, "%v; it may still be written: retry it (an idempotent producer's retry is not written twice)", err)
	case errors.Is(err, wal.ErrFailed):
		return ports.Errorf(ports.ErrUnavailable, "this node cannot make appends durable, it takes none until it restarts: %v", err)
	case errors.Is(err, engine.ErrFenced), errors.Is(err, wal.ErrClosed), errors.Is(err, engine.ErrNotLocal), errors.Is(err, engine.ErrEnding):
		return ports.Errorf(ports.ErrUnavailable, "this node no longer serves %s: %v", st.Name, err)
	}
	return err
}
