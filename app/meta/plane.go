package meta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Errors returned to proposers and readers.
var (
	// ErrHalted: a row failed to decode; this node stopped applying the log
	// rather than fork from the other replicas. Operator action is needed.
	ErrHalted = errors.New("meta: metadata log halted")
	// ErrOutcomeUnknown: the proposal may or may not have been committed (the
	// caller gave up waiting, or the row was folded into a snapshot first).
	// Re-read the view before retrying.
	ErrOutcomeUnknown = errors.New("meta: proposal outcome unknown")
	// ErrClosed: the plane was closed.
	ErrClosed = errors.New("meta: plane closed")
	// ErrUnavailable: the log could not be written for longer than the
	// append timeout.
	ErrUnavailable = errors.New("meta: metadata log unavailable")
)

// maxRowsInFlight bounds rows appended but not yet applied and delivered.
const maxRowsInFlight = 8

// Config tunes a Plane. Zero values take the defaults.
type Config struct {
	Log    ports.MetaLog
	Logger *slog.Logger
	// MaxBatch bounds the commands group-committed in one row (1024; a
	// reader takes up to domain.MaxRowCommands).
	MaxBatch int
	// SnapshotEvery is the number of applied rows between snapshots (1024).
	SnapshotEvery uint64
	// TruncateDelay is how long rows stay in the log after a snapshot covers
	// them, so lagging nodes catch up from rows (30 s; negative: at once).
	TruncateDelay time.Duration
	// PollInterval is how often the tailer polls when no notification
	// arrives (50 ms; notifications wake it sooner). While polls find
	// nothing the interval doubles, up to 20 times this.
	PollInterval time.Duration
	// AppendTimeout bounds how long one row is retried against a failing
	// database before its proposers get ErrUnavailable (10 s).
	AppendTimeout time.Duration
	// QueueDepth bounds queued proposals; Propose blocks when full (4096).
	QueueDepth int
	// Level is the highest feature level this node reads (domain.LevelCurrent;
	// lower only to run as an older release would): a command or snapshot
	// above it halts the plane, and snapshots are written at the lower of
	// it and the cluster's level.
	Level domain.Level
	// ProposeSeconds, if set, observes each successful Propose: queue,
	// group commit and apply, the time a command's caller waits.
	ProposeSeconds ports.Observer
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1024
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = 1024
	}
	if c.TruncateDelay == 0 {
		c.TruncateDelay = 30 * time.Second
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 50 * time.Millisecond
	}
	if c.AppendTimeout <= 0 {
		c.AppendTimeout = 10 * time.Second
	}
	if c.QueueDepth <= 0 {
		c.QueueDepth = 4096
	}
	if c.Level == 0 || c.Level > domain.LevelCurrent {
		c.Level = domain.LevelCurrent
	}
}

// Plane is one node's view of the metadata log.
type Plane struct {
	cfg      Config
	log      ports.MetaLog
	logger   *slog.Logger
	view     atomic.Pointer[domain.State]
	queue    chan *proposal
	appended chan appendedRow // rows stored, results not yet delivered
	nudge    chan struct{}
	cancel   context.CancelFunc
	done     sync.WaitGroup
	// snapshots runs the snapshot writer, which Close waits for only
	// briefly: encoding a large state cannot be interrupted, and a
	// snapshot is an optimisation a shutdown may drop.
	snapshots sync.WaitGroup
	snap      *snapshotter

	mu      sync.Mutex
	applied uint64
	changed chan struct{}       // closed and replaced after every publish
	pending map[uint64]*rowWait // rows this node is appending, by index
	// appliedHook, when set, sees every command the tailer applies (OnApplied).
	appliedHook atomic.Pointer[func(index uint64, cmd domain.Command, r domain.Result)]
	halted      error
	closed      bool
}

// Open loads the latest snapshot, replays the log to its tail, and starts
// tailing and proposing in the background.
func Open(ctx context.Context, cfg Config) (*Plane, error) {
	cfg.defaults()
	p := &Plane{cfg: cfg, log: cfg.Log, logger: cfg.Logger,
		queue: make(chan *proposal, cfg.QueueDepth), appended: make(chan appendedRow, maxRowsInFlight),
		nudge:   make(chan struct{}, 1),
		changed: make(chan struct{}), pending: map[uint64]*rowWait{}}
	st := domain.NewState()
	p.view.Store(&st)
	p.snap = &snapshotter{}
	t := &tailer{p: p, state: st, snap: p.snap}
	if err := t.installSnapshot(ctx); err != nil && !errors.Is(err, ports.ErrNoSnapshot) {
		return nil, fmt.Errorf("meta: load snapshot: %w", err)
	}
	for {
		n, err := t.step(ctx)
		if err != nil {
			return nil, fmt.Errorf("meta: replay: %w", err)
		}
		if n == 0 {
			break
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.done.Add(3)
	go func() { defer p.done.Done(); t.run(runCtx) }()
	go func() { defer p.done.Done(); p.flush(runCtx) }()
	go func() { defer p.done.Done(); p.deliver(runCtx) }()
	return p, nil
}

// OnApplied has fn see every command the tailer applies from now on, with
// its row's index and result, before the row's view is published (wait
// for it with WaitFor). fn runs on the tailer: it must not block.
func (p *Plane) OnApplied(fn func(index uint64, cmd domain.Command, r domain.Result)) {
	p.appliedHook.Store(&fn)
}

// View returns the latest published state. It is immutable: its maps are
// persistent and never change, so it may be read without locks for as long
// as the caller likes. Do not Apply commands to it.
func (p *Plane) View() domain.State { return *p.view.Load() }

// Applied returns the index of the last applied row.
func (p *Plane) Applied() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.applied
}

// WaitFor blocks until row index is applied (and its view published).
func (p *Plane) WaitFor(ctx context.Context, index uint64) error {
	for {
		p.mu.Lock()
		applied, ch, halted := p.applied, p.changed, p.halted
		p.mu.Unlock()
		if applied >= index {
			return nil
		}
		if halted != nil {
			return halted
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// CatchUp waits until the view holds every row the log held when it was
// called: what the view then lacks (a stream another node just created)
// was not there.
func (p *Plane) CatchUp(ctx context.Context) error {
	last, err := p.log.LastIndex(ctx)
	if err != nil {
		return err
	}
	return p.WaitFor(ctx, last)
}

// Health returns nil while the plane applies the log and accepts proposals,
// or the reason it cannot (halted or closed).
func (p *Plane) Health() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.halted != nil {
		return p.halted
	}
	if p.closed {
		return ErrClosed
	}
	return nil
}

// Close stops tailing and proposing. Queued proposals fail with ErrClosed.
// It does not close the log.
func (p *Plane) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.done.Wait()
	p.awaitSnapshots(snapshotCloseWait)
	p.failQueued(ErrClosed)
	return nil
}

// HoldSnapshots starts no more snapshots or truncations: a node shutting
// down writes many rows as it hands its streams back, and rewriting a large
// state meanwhile would hold the log's writer for seconds to save the next
// start a replay of those few rows.
func (p *Plane) HoldSnapshots() { p.snap.held.Store(true) }

// snapshotCloseWait bounds Close's wait for a snapshot being written.
const snapshotCloseWait = time.Second

// awaitSnapshots waits for the snapshot writer for at most d. One still
// encoding then finds the plane closed and writes nothing.
func (p *Plane) awaitSnapshots(d time.Duration) {
	done := make(chan struct{})
	go func() { p.snapshots.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// publish stores a new view and wakes waiters. Called by the tailer only.
func (p *Plane) publish(st domain.State) {
	v := st
	p.view.Store(&v)
	p.mu.Lock()
	p.applied = st.Index
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// halt stops metadata writes on this node for good.
func (p *Plane) halt(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.halted == nil {
		p.halted = fmt.Errorf("%w: %v", ErrHalted, err)
		p.logger.Error("metadata log halted: this node will not apply or propose until restarted", "err", err)
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

func (p *Plane) wake() {
	select {
	case p.nudge <- struct{}{}:
	default:
	}
}
