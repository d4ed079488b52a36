package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picomq/pico/app/auth"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/groups"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/streams"
	"github.com/picomq/pico/app/subscriptions"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Config identifies the node and names its dependencies.
type Config struct {
	ID      domain.NodeID
	Epoch   uint64 // fresh per process start, above the last registered one; 0 picks one
	Address string // the URL other nodes and clients reach this node at
	// Listeners maps each protocol this node serves (domain.ProtocolPico,
	// domain.ProtocolDS) to the URL clients reach that listener at, so
	// that other nodes redirect each client to the listener of its own
	// protocol; nil declares none (Address serves both).
	Listeners map[string]string
	// ClusterID names the cluster; the first node records it in the
	// metadata and a node of another cluster refuses to start on it.
	ClusterID string
	Slots     uint32
	Log       ports.MetaLog
	Lease     ports.Lease
	// Heartbeats records this process's liveness and shows the others'
	// (failover.go); nil records none.
	Heartbeats ports.Heartbeats
	// FailoverAfter is how long the other nodes wait for a registered
	// node's heartbeat record to change before they fence the node, so
	// that its streams open elsewhere (DefaultFailoverAfter); 0 turns
	// failover off here.
	FailoverAfter time.Duration
	// BeatEvery is the heartbeat interval (DefaultBeatEvery). Every node
	// of a cluster must beat at least four times per FailoverAfter of any
	// other: tests shorten both together.
	BeatEvery time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
	// Store holds data objects; WALStore holds the WAL (defaults to Store).
	// Without a Store the node runs the metadata plane only.
	Store, WALStore ports.ObjectStore
	WAL             wal.Config // tuning; store and identity are filled in
	// ProposeSeconds, if set, observes each metadata proposal (see
	// meta.Config).
	ProposeSeconds ports.Observer
	Engine         engine.Config // tuning; dependencies are filled in
	// StoreFailingReady is how long the WAL's store may refuse writes
	// before Ready fails (DefaultStoreFailingReady).
	StoreFailingReady time.Duration
	// UploadEvery is the interval of uploads to data objects (1 s).
	UploadEvery time.Duration
	// RetentionEvery is the interval of record retention and stream expiry
	// sweeps (2 s).
	RetentionEvery time.Duration
	// Webhooks delivers subscription webhooks; nil refuses webhook
	// subscriptions (pull-wake ones still work).
	Webhooks ports.WebhookSender
	// Schemas compiles the schema registry's schemas; nil refuses them.
	Schemas ports.SchemaCompiler
	// FormatOffset writes offsets in webhook bodies as the protocol
	// listener shows them.
	FormatOffset func(uint64) string
	// DeliveryEvery is the interval of the subscription delivery loop
	// (100 ms); requests that start a wake also run it at once.
	DeliveryEvery time.Duration
	// AuthRequired makes Auth decide every request; Start then fails
	// unless some token is stored or AuthBootstrap gives one.
	AuthRequired bool
	// AuthBootstrap is a wire token stored with the root scope at start
	// unless stored already; another secret under its id fails Start.
	AuthBootstrap string
	// Place has new streams placed on the node with the fewest streams per
	// slot (streams.Config.Place); off, they are made where they are asked.
	Place bool
	// Level is the feature level this process reads and declares
	// (domain.LevelCurrent when 0); a lower one runs it as an older release
	// would, for upgrade tests.
	Level domain.Level
}

// DefaultStoreFailingReady is how long the WAL's store may refuse writes
// before the node reports itself not ready: a blip passes unseen, an
// outage shows.
const DefaultStoreFailingReady = 5 * time.Second

// ErrNotReady explains why the node does not take traffic.
var ErrNotReady = errors.New("node: not ready")

// Node is a running node.
type Node struct {
	cfg Config
	// transfers counts the transfers asked of this node (Transfer) by
	// outcome: [0] recorded, [1] refused or failed.
	transfers [2]atomic.Int64
	memory    memoryReturn
	plane     *meta.Plane
	lease     *meta.LeaseKeeper
	wal       *wal.WAL
	engine    *engine.Engine
	streams   *streams.Service
	subs      *subscriptions.Service
	groups    *groups.Service
	auth      *auth.Service
	draining  atomic.Bool
	drains    drains
	runCtx    context.Context // ends as Close stops background work
	stop      context.CancelFunc
	wg        sync.WaitGroup
	// stopChores ends the stream chores (uploads, compaction, retention,
	// deliveries) and chores waits for them: Close stops them before it
	// hands streams back, so none works on a stream being let go.
	stopChores context.CancelFunc
	chores     sync.WaitGroup

	fenced     chan struct{} // closed once this process is fenced
	fencedOnce sync.Once
	fenceCause string             // set before fenced closes
	stopLease  context.CancelFunc // nil without a lease
	failover   failoverStats
	// tenure is when the last confirmed beat began (see Tenure).
	tenure atomic.Pointer[time.Time]
	// watch is the heartbeat watch as of the last round (Liveness).
	watch atomic.Pointer[beatWatch]
}

// Start opens the metadata plane and registers the node. Registration must
// succeed: a lower or equal epoch than the recorded one means another process
// with this node id is newer, and starting would be fenced anyway. A live
// process with this node id at another address is not fenced: Start fails
// with ErrNodeIDInUse (checkIDFree). Before it writes anything, Start
// refuses a log another cluster recorded and stores that fail their check
// (ErrStoreCheck; startcheck.go).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BeatEvery <= 0 {
		cfg.BeatEvery = DefaultBeatEvery
	}
	if cfg.StoreFailingReady <= 0 {
		cfg.StoreFailingReady = DefaultStoreFailingReady
	}
	if cfg.Level == 0 || cfg.Level > domain.LevelCurrent {
		cfg.Level = domain.LevelCurrent
	}
	plane, err := meta.Open(ctx, meta.Config{Log: cfg.Log, Logger: cfg.Logger, Level: cfg.Level, ProposeSeconds: cfg.ProposeSeconds})
	if err != nil {
		return nil, err
	}
	view, explicitEpoch := plane.View(), cfg.Epoch != 0
	if err := checkIDFree(ctx, cfg, &view); err != nil {
		plane.Close()
		return nil, err
	}
	if !explicitEpoch {
		cfg.Epoch = freshEpoch(view, cfg.ID, cfg.Now())
	}
	if err := checkClusterID(&view, cfg.ClusterID); err != nil {
		plane.Close()
		return nil, err
	}
	if err := checkStores(ctx, cfg); err != nil {
		plane.Close()
		return nil, err
	}
	predecessor := ""
	if prev, ok := view.Node(cfg.ID); ok {
		// Registration below fences it, or fails: then nothing is taken.
		predecessor = leaseHolder(cfg.ID, prev.Epoch)
	}
	registering := cfg.Now() // the registration is the first confirmed beat
	reg := &domain.RegisterNode{Node: cfg.ID, Epoch: cfg.Epoch, Address: cfg.Address, Slots: cfg.Slots,
		NowMs: registering.UnixMilli()}
	r, err := plane.ProposeOne(ctx, reg)
	switch {
	case err != nil:
	case r.Code == domain.ResultRedundant && explicitEpoch:
		// The same registration is in place: another process runs, or ran,
		// at this epoch, and would share its WAL key space. (A fresh epoch
		// is above every registered one: redundant only if the plane wrote
		// this very command twice, after a read-back failed.)
		err = fmt.Errorf("node %d epoch %d is registered already: each process needs an epoch of its own (above %d; 0 picks one)", cfg.ID, cfg.Epoch, cfg.Epoch)
	case !r.OK():
		err = fmt.Errorf("node %d epoch %d: %s", cfg.ID, cfg.Epoch, r)
	}
	if err != nil {
		plane.Close()
		return nil, fmt.Errorf("node: register: %w", err)
	}
	if err := claimCluster(ctx, plane, domain.Proposer{Node: cfg.ID, Epoch: cfg.Epoch}, cfg.ClusterID); err != nil {
		plane.Close()
		return nil, err
	}
	if err := declareLevel(ctx, plane, domain.Proposer{Node: cfg.ID, Epoch: cfg.Epoch}, cfg.Level); err != nil {
		plane.Close()
		return nil, err
	}
	if err := declareListeners(ctx, plane, domain.Proposer{Node: cfg.ID, Epoch: cfg.Epoch}, cfg.Listeners); err != nil {
		plane.Close()
		return nil, err
	}
	n := &Node{cfg: cfg, plane: plane, fenced: make(chan struct{})}
	n.tenure.Store(&registering)
	if err := n.startAuth(ctx); err != nil {
		plane.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.runCtx, n.stop = runCtx, cancel
	if cfg.Lease != nil {
		n.lease = &meta.LeaseKeeper{Lease: cfg.Lease, Holder: leaseHolder(cfg.ID, cfg.Epoch),
			Predecessor: predecessor, Now: cfg.Now, Logger: cfg.Logger}
		// A fenced process lets the lease go at once (failover.go).
		leaseCtx, stopLease := context.WithCancel(runCtx)
		n.stopLease = stopLease
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.lease.Run(leaseCtx) }()
	}
	if cfg.Store != nil {
		n.startEngine(runCtx)
	}
	n.wg.Add(1)
	go func() { defer n.wg.Done(); n.runHeartbeats(runCtx) }()
	n.wg.Add(1)
	go func() { defer n.wg.Done(); n.auth.Run(runCtx, n) }()
	return n, nil
}

// startEngine opens this process's WAL and the stream engine, and runs
// uploads and lease-gated maintenance in the background.
func (n *Node) startEngine(runCtx context.Context) {
	ctx, stopChores := context.WithCancel(runCtx)
	n.stopChores = stopChores
	cfg := n.cfg
	w := cfg.WAL
	w.Store, w.Node, w.Epoch, w.Logger = cfg.WALStore, cfg.ID, cfg.Epoch, cfg.Logger
	if w.Store == nil {
		w.Store = cfg.Store
	}
	n.wal = wal.Open(w)
	e := cfg.Engine
	e.Plane, e.By, e.Store, e.WAL, e.Logger, e.Now = n.plane, n.Proposer(), cfg.Store, n.wal, cfg.Logger, cfg.Now
	e.Released = n.memory.released
	n.engine = engine.New(e)
	v := n.plane.View()
	n.memory.loaded(v.StreamCount())
	every := cfg.UploadEvery
	if every <= 0 {
		every = time.Second
	}
	n.chores.Go(func() { n.engine.RunMaintenance(ctx, n, every, time.Second) })
	n.streams = streams.New(streams.Config{Plane: n.plane, Engine: n.engine, By: n.Proposer(),
		Address: cfg.Address, Now: cfg.Now, Logger: cfg.Logger, Serving: n.Serving, Place: cfg.Place, Schemas: cfg.Schemas})
	n.takeTransfers(ctx)
	retain := cfg.RetentionEvery
	if retain <= 0 {
		retain = 2 * time.Second
	}
	n.chores.Go(func() { n.streams.RunRetention(ctx, retain, n) })
	n.startSubscriptions(ctx)
	n.groups = groups.New(groups.Config{Plane: n.plane, By: n.Proposer(), Now: cfg.Now})
}

// startSubscriptions creates the subscription service and runs its
// delivery loop (which works only while this node holds the lease).
func (n *Node) startSubscriptions(ctx context.Context) {
	cfg := n.cfg
	n.subs = subscriptions.New(subscriptions.Config{Plane: n.plane, By: n.Proposer(), Streams: n.streams,
		Webhooks: cfg.Webhooks, FormatOffset: cfg.FormatOffset, Now: cfg.Now, Logger: cfg.Logger})
	every := cfg.DeliveryEvery
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	n.chores.Go(func() { n.subs.RunDelivery(ctx, every, n) })
}

// Engine returns the stream engine, nil when the node has no store.
func (n *Node) Engine() *engine.Engine { return n.engine }

// Streams returns the name-level stream service the listeners drive, nil
// when the node has no store.
func (n *Node) Streams() *streams.Service { return n.streams }

// Transfer moves stream name to node to (streams.Service.Transfer).
func (n *Node) Transfer(ctx context.Context, name string, to domain.NodeID) error {
	if n.streams == nil {
		return ports.Errorf(ports.ErrUnavailable, "this node has no object store")
	}
	return n.countTransfer(n.streams.Transfer(ctx, name, to))
}

// countTransfer counts a transfer's outcome for Stats and returns err.
func (n *Node) countTransfer(err error) error {
	outcome := 0
	if err != nil {
		outcome = 1
	}
	n.transfers[outcome].Add(1)
	return err
}

// Groups returns the consumer group service the Pico listener drives,
// nil when the node has no store.
func (n *Node) Groups() *groups.Service { return n.groups }

// Subscriptions returns the subscription service the Durable Streams
// listener drives, nil when the node has no store.
func (n *Node) Subscriptions() *subscriptions.Service { return n.subs }

// Held reports whether this node holds the maintenance lease (for the
// engine's lease-gated chores).
func (n *Node) Held() (uint64, bool) { return n.LeaseHolder() }

// freshEpoch picks the wall clock in ms, or one above the registered epoch if
// the clock is behind it (a restart within the same millisecond, or a clock
// stepped back), so a restart always fences its predecessor.
func freshEpoch(v domain.State, id domain.NodeID, now time.Time) uint64 {
	epoch := uint64(max(now.UnixMilli(), 1))
	if reg, ok := v.Node(id); ok && reg.Epoch >= epoch {
		epoch = reg.Epoch + 1
	}
	return epoch
}

// leaseHolder names a process as the maintenance lease's holder.
func leaseHolder(id domain.NodeID, epoch uint64) string { return fmt.Sprintf("node-%d-%d", id, epoch) }

// Epoch returns this process's node epoch.
func (n *Node) Epoch() uint64 { return n.cfg.Epoch }

// View returns the latest applied metadata state.
func (n *Node) View() domain.State { return n.plane.View() }

// Plane returns the node's metadata plane.
func (n *Node) Plane() *meta.Plane { return n.plane }

// Proposer is the identity this process stamps on its commands.
func (n *Node) Proposer() domain.Proposer {
	return domain.Proposer{Node: n.cfg.ID, Epoch: n.cfg.Epoch}
}

// Health is liveness: nil while the process runs. A halted metadata plane
// shows in Ready, not here: restarting would not repair a corrupt row.
func (n *Node) Health() error { return nil }

// Ready is nil when the node should receive traffic: not draining, the
// metadata plane healthy, the WAL working, and this process registered in
// the applied state.
func (n *Node) Ready() error {
	if n.draining.Load() {
		return fmt.Errorf("%w: draining", ErrNotReady)
	}
	if err := n.plane.Health(); err != nil {
		return fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	if n.wal != nil {
		if err := n.wal.Err(); err != nil {
			return fmt.Errorf("%w: WAL: %v", ErrNotReady, err)
		}
		if d := n.wal.FailingFor(); d > n.cfg.StoreFailingReady {
			return fmt.Errorf("%w: the object store has refused the WAL's writes for %v (they are retried)", ErrNotReady, d.Round(time.Second))
		}
	}
	v := n.plane.View()
	if reg, ok := v.Node(n.cfg.ID); !ok || reg.Epoch != n.cfg.Epoch {
		return fmt.Errorf("%w: node %d epoch %d is not the registered process", ErrNotReady, n.cfg.ID, n.cfg.Epoch)
	}
	if err := n.Serving(); err != nil {
		if n.failover.beatFailing.Load() {
			return fmt.Errorf("%w: the metadata log does not record this node's heartbeats: %v", ErrNotReady, err)
		}
		return fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	return nil
}

// LeaseHolder reports whether this node holds the maintenance lease.
func (n *Node) LeaseHolder() (epoch uint64, held bool) {
	if n.lease == nil {
		return 0, false
	}
	return n.lease.Held()
}

// Stats are this process's counters and gauges, for monitoring.
type Stats struct {
	WALPuts        int64         // WAL bulks stored, one object-store PUT each
	WALSubmissions int64         // appends in those bulks
	WALPutTime     time.Duration // the time those PUTs took, retries included
	StreamsWritten int           // streams this process writes (open here in the metadata)
	// StreamsInMemory are those of them held in memory; the others were
	// released while idle and reopen at their next request.
	StreamsInMemory int
	WALBuffered     int // bytes appended and not yet durable in the WAL
	BlockCache      engine.CacheStats
	// TransfersOK and TransfersFailed count the transfers asked of this
	// node (by an operator or its own drain) by outcome.
	TransfersOK, TransfersFailed int64
	// GarbagePending is the objects marked as garbage cluster-wide;
	// GarbageDestroyed those this process's collection destroyed.
	GarbagePending   int
	GarbageDestroyed int64
	Streams          int    // streams in the cluster
	AppliedIndex     uint64 // the metadata log row applied last
	LeaseHeld        bool   // this process holds the maintenance lease
	// BeatFailing: this process's last heartbeat was not recorded.
	BeatFailing bool
	// ReadingsUnusable: its last reading of the heartbeats did not count,
	// so it counts no silence (failover.go).
	ReadingsUnusable bool
	NodesFenced      int64 // nodes this process fenced as silent
	// DeadWALTakeovers counts the streams this process took over because a
	// gone process's WAL held records of them not yet committed.
	DeadWALTakeovers int64
}

// Stats reads this process's counters and gauges.
func (n *Node) Stats() Stats {
	v := n.plane.View()
	_, held := n.LeaseHolder()
	s := Stats{Streams: v.StreamCount(), AppliedIndex: v.Index, LeaseHeld: held, GarbagePending: v.GarbageCount(),
		BeatFailing: n.failover.beatFailing.Load(), ReadingsUnusable: n.failover.readingsUnusable.Load(),
		NodesFenced: n.failover.fenced.Load(), TransfersOK: n.transfers[0].Load(), TransfersFailed: n.transfers[1].Load()}
	if n.wal != nil {
		w := n.wal.Stats()
		s.WALPuts, s.WALSubmissions, s.WALPutTime, s.WALBuffered = w.Puts, w.Submissions, w.PutTime, w.Buffered
	}
	if n.engine != nil {
		s.StreamsWritten, s.StreamsInMemory = v.OpenStreamsOf(n.Proposer()), n.engine.LocalCount()
		s.DeadWALTakeovers = n.engine.DeadWALTakeovers()
		s.BlockCache = n.engine.BlockCache()
		s.GarbageDestroyed = n.engine.Destroyed()
	}
	return s
}

// Drain makes Ready fail so load balancers move traffic away.
func (n *Node) Drain() { n.draining.Store(true) }

// Close stops the stream chores, hands every open stream back (committed
// to data objects and closed, so any node opens it without recovery),
// stops the rest of the background work, makes anything still buffered
// durable (the WAL uploads what it holds), leaves the cluster, and stops
// the metadata plane. Call it once no more requests arrive. Heartbeats and
// the lease go on through the handoff: a node that went quiet then would
// be fenced in the middle of it.
func (n *Node) Close() error {
	n.Drain()
	start := time.Now()
	var choresStopped, handedBack time.Duration
	if n.engine != nil {
		n.stopChores()
		n.chores.Wait()
		choresStopped = time.Since(start)
		n.plane.HoldSnapshots()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := n.streams.HandOff(ctx); err != nil {
			n.cfg.Logger.Warn("some streams were not handed back cleanly; the next owner recovers them from the WAL", "err", err)
		}
		cancel()
		handedBack = time.Since(start)
	}
	n.stop()
	n.wg.Wait()
	if n.wal != nil {
		if err := n.wal.Close(); err != nil {
			n.cfg.Logger.Warn("WAL closed with an error", "err", err)
		}
	}
	n.leave()
	err := n.plane.Close()
	n.cfg.Logger.Info("node closed", "chores_stopped_after", choresStopped.Round(time.Millisecond),
		"handed_back_after", handedBack.Round(time.Millisecond), "closed_after", time.Since(start).Round(time.Millisecond))
	return err
}

// leave fences this process itself once it has stopped: no stream is
// placed on it any more, a stream it could not hand back opens elsewhere at
// once, and failover has nobody to judge (failover.go). A restart registers
// again.
func (n *Node) leave() {
	if v := n.plane.View(); v.Superseded(n.Proposer()) {
		return // fenced or superseded already
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := n.Proposer()
	r, err := n.plane.ProposeOne(ctx, &domain.FenceNode{By: p, Node: p.Node, Epoch: p.Epoch})
	if err != nil || (!r.OK() && r.Code != domain.ResultNodeFenced) { // fenced: superseded meanwhile
		n.cfg.Logger.Warn("could not leave the cluster; failover fences this node later", "result", r.String(), "err", err)
	}
}

// clusterKey is the registry key holding the cluster's name.
const clusterKey = "cluster-id"

// declareListeners records the address of each of this process's
// listeners by protocol.
func declareListeners(ctx context.Context, plane *meta.Plane, by domain.Proposer, listeners map[string]string) error {
	cmds := make([]domain.Command, 0, len(listeners))
	for protocol, addr := range listeners {
		cmds = append(cmds, domain.DeclareListener(by, protocol, addr))
	}
	if len(cmds) == 0 {
		return nil
	}
	rs, err := plane.Propose(ctx, cmds...)
	for i := range rs {
		if err == nil && !rs[i].OK() {
			err = errors.New(rs[i].String())
		}
	}
	if err != nil {
		return fmt.Errorf("node: declare listeners: %w", err)
	}
	return nil
}

// declareLevel records the feature level this process reads, so that the
// others write what it adds only once every node reads it.
func declareLevel(ctx context.Context, plane *meta.Plane, by domain.Proposer, level domain.Level) error {
	r, err := plane.ProposeOne(ctx, domain.DeclareLevel(by, level))
	if err == nil && !r.OK() {
		err = errors.New(r.String())
	}
	if err != nil {
		return fmt.Errorf("node: declare feature level %d: %w", level, err)
	}
	return nil
}

// claimCluster records id as the cluster's name if none is recorded yet, and
// fails if another is: two clusters must never share a metadata log.
func claimCluster(ctx context.Context, plane *meta.Plane, by domain.Proposer, id string) error {
	if id == "" {
		return nil
	}
	r, err := plane.ProposeOne(ctx, &domain.PutKVIf{By: by, Space: domain.SpaceRegistry, Key: clusterKey, Value: []byte(id)})
	if err != nil {
		return fmt.Errorf("node: record cluster id: %w", err)
	}
	if r.OK() {
		return nil
	}
	v := plane.View()
	return checkClusterID(&v, id) // another cluster's node claimed it first
}
