package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Errors of the engine's stream operations.
var (
	ErrNotFound = errors.New("engine: stream not found")
	// ErrNotOwner: another live process writes the stream.
	ErrNotOwner = errors.New("engine: stream is open on another node")
	// ErrNotLocal: the stream is not open on this process (or was let go
	// meanwhile); Open it first. An operation returns it before any effect.
	ErrNotLocal = errors.New("engine: stream not open here")
	// ErrPinned: the stream has forks reading its records, so they cannot
	// be trimmed.
	ErrPinned = errors.New("engine: stream has forks")
	// ErrFenced: a newer writer took the stream over. Its fence in this
	// process's WAL failed the append, or its stream epoch refused a seal.
	// It is wal.ErrFenced, so one errors.Is covers both.
	ErrFenced = wal.ErrFenced
	// ErrNotDurable: an append's records were not durable within
	// AppendTimeout (the object store is failing or slow). They stay
	// submitted and become durable, in order, if the store takes them: the
	// outcome is unknown to the caller.
	ErrNotDurable = errors.New("engine: the append is not durable yet")
)

// Config wires an Engine.
type Config struct {
	Plane  *meta.Plane
	By     domain.Proposer // this process
	Store  ports.ObjectStore
	WAL    *wal.WAL
	Logger *slog.Logger
	Now    func() time.Time
	// TailRecords and TailBytes bound each stream's newest records that
	// stay in memory after they are committed, for readers near the tail
	// (1024 records, 64 KiB of bodies and headers: whichever is fewer).
	// Readers further behind read the data objects, through the block
	// cache. A bound in bytes keeps large records from pinning megabytes
	// per stream, and a busy node from growing its heap for seconds on
	// end, touching fresh pages, before the tails are full.
	TailRecords int
	TailBytes   int
	// BlockCacheBytes bounds the cache of committed sections (256 MiB).
	BlockCacheBytes int
	// MaxObjectBytes is the size at which an upload pass closes its data
	// object (32 MiB); one stream's range is never split.
	MaxObjectBytes int
	// MaxUncommittedBytes bounds record bytes appended but not yet in data
	// objects; appends wait beyond it while uploads catch up (256 MiB).
	MaxUncommittedBytes int
	// UploadThresholdBytes of uncommitted records start an upload before
	// the next interval (32 MiB).
	UploadThresholdBytes int
	// AppendTimeout bounds how long an append waits for its records, or
	// a duplicate's original, to be durable before ErrNotDurable (10 s).
	AppendTimeout time.Duration
	// ReleaseIdleAfter is how long a local stream stays in memory unused
	// before the maintenance loop releases it (releaseIdle); zero keeps
	// every stream in memory while it is open here.
	ReleaseIdleAfter time.Duration
	// Released, if set, is told after each maintenance round how many
	// streams it released while idle (often none).
	Released func(n int)
}

// Engine serves the streams this process writes.
type Engine struct {
	cfg     Config
	mu      sync.Mutex
	streams map[uint64]*stream
	// streamsPeak is the most streams local since streams was last made
	// anew (unpublish). Under mu.
	streamsPeak int
	// closing holds streams whose CloseStream had an unknown outcome: it
	// may still apply, so they are opened again at a new epoch (which makes
	// it stale), never reused at the epoch it names. Under mu.
	closing map[uint64]bool
	// recovering holds opens whose OpenStream applied (or may have) but
	// whose recovery did not finish: the next open here finishes it from
	// the same predecessors. Under mu.
	recovering map[uint64]pendingRecovery
	deadWALs   deadWALPasses // the dead-WAL passes' memory
	destroyed  atomic.Int64  // objects CollectGarbage destroyed
	opens      flights
	// fenced holds what was read from fenced predecessors' WALs, so taking
	// over many streams of one dead process fences and reads its WAL once,
	// not once per stream. fencing guards it.
	fencing   sync.Mutex
	fenced    map[domain.Proposer]*fencedWAL
	uploading sync.Mutex // one upload pass at a time
	objectBuf []byte     // the last data object's buffer, reused; under uploading
	blocks    *blockCache
	indexes   *indexCache

	// uncommitted counts record bytes appended and not yet committed; room
	// is closed and replaced whenever it drops.
	roomMu      sync.Mutex
	uncommitted int
	room        chan struct{}
	kick        chan struct{} // asks the maintenance loop for an upload now

	// toUpload and toCompact are the streams the next upload and
	// compaction rounds visit.
	toUpload, toCompact dirtySet
	// timed holds the local streams whose configuration is Timed, the only
	// ones the retention sweep visits. Under mu.
	timed map[uint64]struct{}
	// idle queues the other local streams for release once idle.
	idle idleQueue
	// handoff: reopenOwn holds it shared until it has published; CloseAll
	// takes it to set handingOff, after which streams this process writes
	// are no longer reopened here (see closeReleased).
	handoff    sync.RWMutex
	handingOff bool
}

// indexCacheSections bounds the decoded object indexes kept: a section
// takes about a hundred bytes.
const indexCacheSections = 1 << 18

// New returns an engine with no open streams.
func New(cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TailRecords <= 0 {
		cfg.TailRecords = 1024
	}
	if cfg.TailBytes <= 0 {
		cfg.TailBytes = 64 << 10
	}
	if cfg.BlockCacheBytes <= 0 {
		cfg.BlockCacheBytes = 256 << 20
	}
	if cfg.MaxObjectBytes <= 0 {
		cfg.MaxObjectBytes = 32 << 20
	}
	if cfg.MaxUncommittedBytes <= 0 {
		cfg.MaxUncommittedBytes = 256 << 20
	}
	if cfg.UploadThresholdBytes <= 0 {
		cfg.UploadThresholdBytes = 32 << 20
	}
	if cfg.AppendTimeout <= 0 {
		cfg.AppendTimeout = 10 * time.Second
	}
	return &Engine{cfg: cfg, streams: map[uint64]*stream{}, timed: map[uint64]struct{}{}, closing: map[uint64]bool{},
		recovering: map[uint64]pendingRecovery{}, blocks: newBlockCache(cfg.BlockCacheBytes),
		indexes: newIndexCache(indexCacheSections),
		fenced:  map[domain.Proposer]*fencedWAL{}, deadWALs: deadWALPasses{fenceKeys: map[string]bool{}, unclosed: map[uint64]uint64{}},
		room: make(chan struct{}), kick: make(chan struct{}, 1)}
}

func (e *Engine) local(id uint64) (*stream, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.streams[id]
	return s, ok
}

// publish makes s the local stream of its id, marked for an upload (a
// recovery may have loaded records) and a compaction check. e.mu is held.
func (e *Engine) publish(s *stream) {
	e.streams[s.id] = s
	e.toUpload.add(s.id)
	e.toCompact.add(s.id)
	v := e.cfg.Plane.View()
	if st, ok := v.Stream(s.id); ok {
		if cfg, err := domain.DecodeStreamConfig(st.Meta); err == nil && cfg.Timed() {
			e.timed[s.id] = struct{}{}
			return
		}
	}
	if e.cfg.ReleaseIdleAfter > 0 {
		e.idle.push(s, e.cfg.Now())
	}
}

// unpublish forgets local stream s, if it is still the one of its id.
// e.mu is held.
func (e *Engine) unpublish(s *stream) {
	if e.streams[s.id] == s {
		delete(e.streams, s.id)
		delete(e.timed, s.id)
	}
	e.streamsPeak = max(e.streamsPeak, len(e.streams)+1)
	if e.streamsPeak > 1024 && len(e.streams) < e.streamsPeak/4 {
		// A map keeps the room of its largest size: once most streams
		// are released, a smaller one holds the rest.
		rest := make(map[uint64]*stream, len(e.streams))
		maps.Copy(rest, e.streams)
		e.streams, e.streamsPeak = rest, len(e.streams)
	}
}

// Open makes this process the writer of stream id and returns its handle.
// If another process wrote it and is gone (restarted or fenced), Open
// fences that process's WAL and recovers every record it acknowledged,
// rewriting them into this process's WAL before any new append is
// accepted.
func (e *Engine) Open(ctx context.Context, id uint64) (Handle, error) {
	if s, ok := e.local(id); ok && s.err() == nil {
		if !s.used.Load() { // a write only once per idle period: readers of a hot stream share the line
			s.used.Store(true)
		}
		return Handle{e: e, s: s}, nil
	}
	// One open per stream at a time; opens of different streams run side by
	// side (a restarted node reopens its streams concurrently). An open
	// outlives the caller that started it: others may be waiting for it.
	err := e.opens.do(ctx, id, func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), openTimeout)
		defer cancel()
		return e.open(ctx, id)
	})
	if err != nil {
		return Handle{}, err
	}
	s, ok := e.local(id)
	if !ok {
		return Handle{}, ErrNotLocal // let go again at once (a takeover's close)
	}
	return Handle{e: e, s: s, Opened: true}, nil
}

// openTimeout bounds one open, recovery included.
const openTimeout = time.Minute

func (e *Engine) open(ctx context.Context, id uint64) error {
	if s, ok := e.local(id); ok && s.err() == nil {
		return nil // opened by the call we waited for
	}
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok {
		return ErrNotFound
	}
	own := e.writes(st)
	if to := e.transferElsewhere(&v, id); to != 0 && !(own && v.IsOpen(st)) {
		// Its writer may still open it (to serve it until it lets go).
		return fmt.Errorf("%w: stream %d is being transferred to node %d", ErrNotOwner, id, to)
	}
	e.mu.Lock()
	closing := e.closing[id]
	if !own {
		delete(e.closing, id) // another writer had it since: nothing is pending
	}
	pending, unfinished := e.recovering[id]
	delete(e.recovering, id)
	e.mu.Unlock()
	if unfinished && v.IsOpen(st) && own && st.Epoch == pending.epoch {
		// Opened here before, and the recovery failed: finish it.
		return e.recoverOrRemember(ctx, pending)
	}
	if v.IsOpen(st) && own && !closing {
		// Opened by this process at create, not yet written here.
		return e.reopenOwn(ctx, st)
	}
	// A writer that closed the stream itself committed every record first
	// (Close), as did this process before a close of unknown outcome; only
	// a writer that vanished must be fenced and read.
	n, alive := v.Node(st.Owner)
	closedCleanly := (alive && !st.Open && n.Epoch == st.OwnerEpoch) || (own && closing)
	pending = pendingRecovery{prev: *st, epoch: st.Epoch + 1, sources: recoverySources(st, !closedCleanly)}
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.OpenStream{By: e.cfg.By, Stream: id, Epoch: pending.epoch})
	if err != nil {
		// The open may have applied. Nothing is read yet, so nothing is
		// remembered: the next open here then finds the stream its own and
		// takes the recovery from the metadata (reopenOwn), as appliedOpen
		// does, not from the view read above.
		return err
	}
	switch r.Code {
	case domain.ResultOK, domain.ResultRedundant:
		// Redundant: an earlier attempt of this very open applied.
		if pending, err = e.appliedOpen(id, pending.epoch); err != nil {
			return err
		}
	case domain.ResultNotClosed:
		return fmt.Errorf("%w: %s", ErrNotOwner, r.Reason)
	case domain.ResultNotFound:
		return ErrNotFound
	case domain.ResultConflict:
		if now := e.cfg.Plane.View(); e.transferElsewhere(&now, id) != 0 {
			return fmt.Errorf("%w: %s", ErrNotOwner, r.Reason) // a transfer started meanwhile
		}
		return fmt.Errorf("engine: open stream %d: %s", id, r)
	default:
		return fmt.Errorf("engine: open stream %d: %s", id, r)
	}
	return e.recoverOrRemember(ctx, pending)
}

// transferElsewhere is the node other than this one that stream id is
// being transferred to in v, or 0: only that node may open it.
func (e *Engine) transferElsewhere(v *domain.State, id uint64) domain.NodeID {
	st, ok := v.Stream(id)
	if !ok {
		return 0
	}
	if to := v.PendingTransfer(st); to != e.cfg.By.Node {
		return to
	}
	return 0
}

// writes reports whether this process opened st (it may have lost it
// since: see State.IsOpen).
func (e *Engine) writes(st *domain.Stream) bool {
	return st.Owner == e.cfg.By.Node && st.OwnerEpoch == e.cfg.By.Epoch
}

// appliedOpen is the recovery of this process's open of stream id at epoch,
// as the metadata holds it once the open applied. The view read before
// proposing may predate a close of the stream (and commits) by a writer
// that is still alive: judged from it, the recovery would fence that
// process's WAL, all of its streams with it, and start from a stale end.
// OpenStream itself lists the writer as unrecovered exactly when it had
// not closed the stream, and nothing but this process changes the stream
// at the new epoch.
func (e *Engine) appliedOpen(id, epoch uint64) (pendingRecovery, error) {
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	switch {
	case !ok:
		return pendingRecovery{}, ErrNotFound
	case st.Epoch != epoch || !e.writes(st):
		return pendingRecovery{}, fmt.Errorf("%w: opened again at epoch %d", ErrNotOwner, st.Epoch)
	}
	return pendingRecovery{prev: *st, epoch: epoch, sources: slices.Clone(st.Unrecovered)}, nil
}

// Close commits a stream's records to data objects and releases it, so any
// node can open it next without reading this process's WAL.
func (e *Engine) Close(ctx context.Context, id uint64) error {
	s, ok := e.local(id)
	if !ok {
		return ErrNotLocal
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	if err := s.waitConfirmed(ctx, s.write.Next); err != nil {
		return err
	}
	if _, err := e.Upload(ctx); err != nil {
		return err
	}
	if s.committedThrough() < s.write.Next {
		return fmt.Errorf("engine: stream %d not fully committed", id)
	}
	if err := e.proposeCloses(ctx, []*stream{s}); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}
