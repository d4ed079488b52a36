package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/adapters/jsonschema"
	"github.com/picomq/pico/adapters/prommetrics"
	"github.com/picomq/pico/adapters/sqllog"
	"github.com/picomq/pico/adapters/webhookhttp"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

type serveFlags struct {
	nodeID      uint
	nodeEpoch   uint64
	slots       uint
	listen      string
	adminListen string
	noAdmin     bool
	httpAddress string
	metaURL     string
	storage     string
	wal         string
	walCache    uint64
	walPutRate  float64
	blockCache  uint64
	uploadBytes uint64
	uploadMs    uint
	drainSec    uint
	// drainSecGiven: --shutdown-drain-sec was given (or its variable).
	drainSecGiven    bool
	shutdownTransfer optionalBool
	logLevel         string
	logFormat        string
	clusterID        string
	protocol         string
	routing          string
	dsListen         string
	dsHTTPAddress    string
	longPollSec      float64
	sseMaxSec        float64
	failoverSec      float64
	maxBody          uint64
	maxChunk         uint64
	auth             string
	bootstrap        string
	bootstrapF       string
	allowRemote      bool
	faultInjection   bool
	webhookLoopback  bool
	appendSec        float64
	idleReleaseSec   float64
	guardFlags
}

func parseServe(args []string) (*serveFlags, error) {
	f := &serveFlags{}
	fs := f.flagSet()
	if err := parseWithEnv(fs, args); errors.Is(err, flag.ErrHelp) {
		return nil, &helpRequest{text: serveHelp()}
	} else if err != nil {
		return nil, &usageError{msg: flagMistake(fs, err), usage: "run pico serve -h for its flags\n"}
	}
	fs.Visit(func(fl *flag.Flag) { f.drainSecGiven = f.drainSecGiven || fl.Name == "shutdown-drain-sec" })
	return f, f.validate()
}

// serveHelp is pico serve's flag help.
func serveHelp() string {
	fs := (&serveFlags{}).flagSet()
	var b strings.Builder
	fs.SetOutput(&b)
	fs.Usage()
	b.WriteString(storageHelp)
	return b.String()
}

// storageHelp explains the ID@ in --storage's default, which users ask
// about.
const storageHelp = `
--storage and --wal take [ID@]URL. The ID@ (the default's -2@) is the
bucket id of the original PicoMQ's storage URIs, accepted so that those
URIs work unchanged; this build ignores it: the URL alone names the store.
`

// flagSet declares pico serve's flags into f.
func (f *serveFlags) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.UintVar(&f.nodeID, "node-id", 1, "stable id of this node in the cluster (1 or more)")
	fs.Uint64Var(&f.nodeEpoch, "node-epoch", 0, "epoch of this process, above the node's registered one (a clean stop or a fence moves that up by one); 0 picks the wall clock in ms, above it")
	fs.UintVar(&f.slots, "slots", 1, "placement weight; 0 takes no new streams")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:4437", "protocol listener address")
	fs.StringVar(&f.adminListen, "admin-listen", "127.0.0.1:9090", "admin listener address (probes, cluster view)")
	fs.BoolVar(&f.noAdmin, "no-admin", false, "do not start the admin listener")
	fs.StringVar(&f.httpAddress, "http-address", "", "URL clients and nodes reach this node at (default http://LISTEN)")
	fs.StringVar(&f.metaURL, "meta-url", "sqlite:./data/meta.db", "metadata log: sqlite:PATH, sqlite::memory: or postgres://…")
	fs.StringVar(&f.storage, "storage", "-2@file://./data/objects", "object store: [ID@]file://DIR or [ID@]s3://BUCKET?region=…&endpoint=…&pathStyle=true (credentials from AWS_*); ID@ is ignored (see below)")
	fs.StringVar(&f.wal, "wal", "", "object store for the WAL (default: --storage); bulkBytes=N, inflight=N, pipeline=N and linger=DURATION (0: off) parameters tune it")
	fs.Uint64Var(&f.walCache, "wal-cache-size", 64<<20, "bytes of appends buffered for the WAL before appenders wait")
	fs.Float64Var(&f.walPutRate, "wal-max-puts-per-second", 0, "the cost dial: at most this many WAL PUTs a second (0: no bound); appends share the PUTs it allows")
	fs.Uint64Var(&f.blockCache, "block-cache-size", 256<<20, "bytes of committed data cached for reads")
	fs.Uint64Var(&f.uploadBytes, "wal-upload-threshold", 32<<20, "uncommitted bytes that start an upload to data objects")
	fs.UintVar(&f.uploadMs, "wal-upload-interval-ms", 1000, "interval of uploads to data objects")
	fs.Float64Var(&f.failoverSec, "failover-after-sec", node.DefaultFailoverAfter.Seconds(), fmt.Sprintf("fence a node whose heartbeat stopped this long, so its streams open elsewhere (0: never; at least %g, four heartbeats; set it alike on every node)", node.MinFailoverAfter.Seconds()))
	fs.Float64Var(&f.appendSec, "append-timeout-sec", 10, "answer 503 to an append not durable within this long (the object store failing); it may still be written")
	fs.Float64Var(&f.idleReleaseSec, "idle-release-sec", 30, "give back the memory of an open stream unused this long: its next request reopens it from the metadata and its last data object (0: never)")
	fs.UintVar(&f.drainSec, "shutdown-drain-sec", 0, fmt.Sprintf("on SIGTERM/SIGINT, report not-ready for this long before closing; with --shutdown-transfer the most its transfers may take (%d unless given)", int(defaultTransferDeadline.Seconds())))
	fs.Var(&f.shutdownTransfer, "shutdown-transfer", "on SIGTERM/SIGINT, move this node's streams to the other nodes first (within --shutdown-drain-sec), still serving them meanwhile; auto: on unless --meta-url is SQLite (one node)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error; debug adds a line per request")
	fs.StringVar(&f.logFormat, "log-format", "text", "text (key=value lines) or json (one object a line)")
	fs.StringVar(&f.clusterID, "cluster-id", "picomq", "name of the cluster; a node refuses a metadata log of another cluster")
	fs.StringVar(&f.protocol, "protocol", "pico", "wire protocol of --listen: pico or ds (Durable Streams)")
	fs.StringVar(&f.dsListen, "ds-listen", "", "also serve Durable Streams on this address, beside --listen")
	fs.StringVar(&f.dsHTTPAddress, "ds-http-address", "", "URL clients reach the --ds-listen listener at, where other nodes redirect Durable Streams clients (default http://DS-LISTEN)")
	fs.StringVar(&f.routing, "routing", "redirect", "redirect: answer 307 to a stream's owner; local: serve every request here")
	fs.Float64Var(&f.longPollSec, "long-poll-timeout-sec", 25, "how long a long-poll read waits for new records (fractions allowed)")
	fs.Float64Var(&f.sseMaxSec, "sse-max-duration-sec", 55, "how long one SSE response lasts before the client reconnects")
	fs.Uint64Var(&f.maxBody, "max-body-size", 8<<20, "largest request body in bytes (larger gets 413)")
	fs.Uint64Var(&f.maxChunk, "max-chunk-size", 64<<10, "bytes of records one read returns when the reader sets no limit")
	f.guardFlagSet(fs)
	fs.StringVar(&f.auth, "auth", "off", "off, or required: every request but probes and preflights needs a bearer token")
	fs.StringVar(&f.bootstrap, "auth-bootstrap-token", "", "store this token (BASE64URL(id).BASE64URL(secret)) with the root scope at start; the same on every node")
	fs.StringVar(&f.bootstrapF, "auth-bootstrap-token-file", "", "read the bootstrap token from this file (kept out of process listings)")
	fs.BoolVar(&f.allowRemote, "insecure-allow-remote", false, "allow --auth off on listeners beyond loopback")
	fs.BoolVar(&f.faultInjection, "test-fault-injection", false, "testing aid: serve POST/DELETE /_test/inject-error on the protocol listeners, through which anyone may make this node fail requests (not with --auth required)")
	fs.BoolVar(&f.webhookLoopback, "webhook-allow-loopback", false, "let webhooks reach http://localhost and http://127.0.0.x, for development: a subscription may then make this node post to any local service")
	fs.Usage = usageWithEnv(fs, "pico serve [flags]")
	return fs
}

// maxFailoverSec caps --failover-after-sec at a day; maxNodeEpoch keeps
// epochs, and the ones fencing and restarts add, within the SQL log's
// signed 64-bit columns.
const (
	maxFailoverSec = 86400
	maxNodeEpoch   = math.MaxInt64 / 2
)

func (f *serveFlags) validate() error {
	switch {
	case f.nodeID == 0 || f.nodeID > 1<<31:
		return fmt.Errorf("--node-id must be between 1 and %d", 1<<31)
	case f.protocol != "pico" && f.protocol != "ds":
		return fmt.Errorf("--protocol %q: want pico or ds", f.protocol)
	case f.dsHTTPAddress != "" && f.dsListen == "":
		return errors.New("--ds-http-address is the address of --ds-listen: give both")
	case f.routing != "redirect" && f.routing != "local":
		return fmt.Errorf("--routing %q: want redirect or local", f.routing)
	case f.auth != "off" && f.auth != "required":
		return fmt.Errorf("--auth %q: want off or required", f.auth)
	case f.faultInjection && f.auth == "required":
		return errors.New("--test-fault-injection cannot run with --auth required: its hook lets any client make the node fail requests, so it is for test servers only")
	case f.bootstrap != "" && f.bootstrapF != "":
		return errors.New("give --auth-bootstrap-token or --auth-bootstrap-token-file, not both")
	case f.failoverSec != 0 && !(f.failoverSec >= node.MinFailoverAfter.Seconds() && f.failoverSec <= maxFailoverSec):
		return fmt.Errorf("--failover-after-sec must be 0 (never) or from %g (four heartbeats) to %d", node.MinFailoverAfter.Seconds(), maxFailoverSec)
	case f.nodeEpoch > maxNodeEpoch:
		return fmt.Errorf("--node-epoch must be at most %d", uint64(maxNodeEpoch))
	case !(f.appendSec > 0 && f.appendSec <= 3600):
		return errors.New("--append-timeout-sec must be above 0 and at most 3600")
	case !(f.idleReleaseSec >= 0 && f.idleReleaseSec <= 86400):
		return errors.New("--idle-release-sec must be from 0 (never) to 86400")
	case f.longPollSec <= 0 || f.sseMaxSec <= 0:
		return errors.New("--long-poll-timeout-sec and --sse-max-duration-sec must be positive")
	case f.maxBody == 0 || f.maxChunk == 0:
		return errors.New("--max-body-size and --max-chunk-size must be positive")
	}
	if err := f.guardFlags.validate(); err != nil {
		return err
	}
	return f.checkBinds()
}

// checkBinds is the bind guard: with --auth off, no listener binds beyond
// loopback unless --insecure-allow-remote says something else guards it.
func (f *serveFlags) checkBinds() error {
	if f.auth != "off" || f.allowRemote {
		return nil
	}
	binds := []struct{ flag, addr string }{{"--listen", f.listen}, {"--ds-listen", f.dsListen}, {"--admin-listen", f.adminListen}}
	for _, b := range binds {
		if b.addr == "" || b.flag == "--admin-listen" && f.noAdmin || isLoopback(b.addr) {
			continue
		}
		return fmt.Errorf("%s %s is not a loopback address: with --auth off anyone who reaches it may read, write and administer every stream; run with --auth required (and a bootstrap token), or pass --insecure-allow-remote if something else guards the network", b.flag, b.addr)
	}
	return nil
}

// bootstrapToken is the bootstrap token the flags give, "" for none; a
// file's trailing newline is not part of it.
func (f *serveFlags) bootstrapToken() (string, error) {
	if f.bootstrapF == "" {
		return f.bootstrap, nil
	}
	b, err := os.ReadFile(f.bootstrapF)
	if err != nil {
		return "", fmt.Errorf("--auth-bootstrap-token-file: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// isLoopback reports whether a listen address binds only loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func serve(args []string) error {
	f, err := parseServe(args)
	if err != nil {
		return err
	}
	logger, err := newLogger(f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	guard := f.newConnGuard(logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	bootstrap, err := f.bootstrapToken()
	if err != nil {
		return err
	}
	log, unlock, err := openMetaLog(ctx, f.metaURL)
	if err != nil {
		return err
	}
	defer unlock()
	defer log.Close()
	cfg := node.Config{ID: domain.NodeID(f.nodeID), Epoch: f.nodeEpoch, Address: f.httpAddress, ClusterID: f.clusterID,
		Slots: uint32(f.slots), Log: log, Lease: log.Lease(), Logger: logger,
		Webhooks: webhookhttp.New(webhookhttp.Config{Policy: ports.WebhookPolicy{AllowLoopback: f.webhookLoopback}}), FormatOffset: dshttp.FormatOffset,
		Schemas:    jsonschema.Compiler{},
		Heartbeats: log.Heartbeats(), FailoverAfter: time.Duration(f.failoverSec * float64(time.Second)),
		AuthRequired: f.auth == "required", AuthBootstrap: bootstrap, Place: f.routing != "local"}
	if cfg.Level, err = featureLevel(); err != nil {
		return err
	}
	metrics := prommetrics.New()
	cfg.WAL.PutSeconds, cfg.WAL.PutBytes = metrics.WALUploadSeconds, metrics.WALUploadBytes
	cfg.ProposeSeconds = metrics.ProposeSeconds
	if err := f.storageConfig(ctx, &cfg, metrics); err != nil {
		return err
	}
	// Protocol ports are bound before the node registers, so the address
	// it advertises is the real one even for --listen HOST:0.
	ls, err := f.bindListeners()
	if err != nil {
		return err
	}
	defer ls.closeAll()
	if cfg.Address == "" {
		cfg.Address = "http://" + ls[0].ln.Addr().String()
		warnUnreachableAddress(cfg.Address, ls[0].ln.Addr(), "--http-address", logger)
	}
	cfg.Listeners = f.advertisedListeners(ls, cfg.Address, logger)
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer n.Close() // last: streams handed back, the WAL makes every buffered append durable
	done := make(chan struct{})
	metrics.Registry().MustRegister(append(nodeCollectors(n), guard.collector())...)
	for _, l := range ls {
		l.serve(f.protocolHandler(l.protocol, n, metrics, guard, done, logger), f.faultTable(l, logger), metrics, guard, logger)
	}
	var admin *http.Server
	adminLine := "admin listener off (--no-admin)"
	if !f.noAdmin {
		var adminAt string
		if admin, adminAt, err = listenAdmin(f.adminListen, n, metrics, guard, logger); err != nil {
			return err
		}
		adminLine = "admin on " + adminAt
	}
	for _, l := range ls[1:] {
		fmt.Printf("%s on http://%s\n", l.protocol, l.ln.Addr())
	}
	fmt.Printf("serving on http://%s (advertised as %s)\n%s\n", ls[0].ln.Addr(), cfg.Address, adminLine)
	logger.Info("pico node serving", "node", f.nodeID, "epoch", n.Epoch(), "cluster", f.clusterID,
		"protocol", f.protocol, "meta", redactURL(f.metaURL), "storage", f.storage)
	select {
	case <-ctx.Done():
		return shutdown(n, ls, admin, done, f.stopPlan(), logger)
	case <-n.Fenced():
		// Nothing this process does can commit any more: stop, so that a
		// supervisor restarts it at a fresh epoch.
		_ = shutdown(n, ls, admin, done, stopPlan{}, logger)
		return fmt.Errorf("node %d epoch %d was fenced: %s; a restart rejoins at a fresh epoch", f.nodeID, n.Epoch(), n.FenceCause())
	}
}

// warnUnreachableAddress warns when the address the node advertises, to
// other nodes and in redirects, is its wildcard bind (0.0.0.0, [::]):
// nobody else can reach that.
func warnUnreachableAddress(advertised string, bound net.Addr, flag string, logger *slog.Logger) {
	if tcp, ok := bound.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		logger.Warn("the advertised address is this host's wildcard bind, which other nodes and redirected clients cannot reach: set "+flag+" to a URL they can (http://HOST:PORT)",
			"advertised", advertised)
	}
}

// openMetaLog opens the metadata log; a SQLite file is locked for this
// process first (lockMetaFile), and release lets it go after the log.
func openMetaLog(ctx context.Context, url string) (log *sqllog.Log, release func(), err error) {
	release = func() {}
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok && !strings.Contains(path, ":memory:") {
		path = strings.TrimPrefix(path, "//")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, nil, fmt.Errorf("create metadata directory: %w", err)
		}
		if release, err = lockMetaFile(path); err != nil {
			return nil, nil, err
		}
	}
	if log, err = sqllog.Open(ctx, url); err != nil {
		release()
		return nil, nil, err
	}
	return log, release, nil
}

func newLogger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(os.Stderr, opts)
	case "json":
		h = slog.NewJSONHandler(os.Stderr, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	logger := slog.New(h)
	slog.SetDefault(logger)
	return logger, nil
}

// redactURL hides a password in a database URL before it is logged.
func redactURL(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	creds := u[scheme+3 : at]
	if user, _, ok := strings.Cut(creds, ":"); ok {
		return u[:scheme+3] + user + ":***" + u[at:]
	}
	return u
}

// storageConfig opens the object stores, measured by metrics, and applies
// the engine tuning flags.
func (f *serveFlags) storageConfig(ctx context.Context, cfg *node.Config, metrics *prommetrics.Metrics) error {
	if err := makeFileStoreDir(f.storage); err != nil {
		return err
	}
	store, err := openStorage(ctx, f.storage)
	if err != nil {
		return err
	}
	cfg.Store = metrics.Store(store)
	if f.wal != "" {
		raw, err := walParams(f.wal, &cfg.WAL)
		if err != nil {
			return err
		}
		walStore, err := openStorage(ctx, raw)
		if err != nil {
			return err
		}
		cfg.WALStore = metrics.Store(walStore)
	}
	cfg.WAL.MaxBufferedBytes = int(f.walCache)
	if f.walPutRate < 0 {
		return fmt.Errorf("--wal-max-puts-per-second %v: want 0 (no bound) or more", f.walPutRate)
	}
	cfg.WAL.MaxPutRate = f.walPutRate
	cfg.Engine.BlockCacheBytes = int(f.blockCache)
	cfg.Engine.UploadThresholdBytes = int(f.uploadBytes)
	cfg.Engine.AppendTimeout = time.Duration(f.appendSec * float64(time.Second))
	cfg.Engine.ReleaseIdleAfter = time.Duration(f.idleReleaseSec * float64(time.Second))
	cfg.UploadEvery = time.Duration(f.uploadMs) * time.Millisecond
	return nil
}

// makeFileStoreDir creates a file:// store's directory, so the default
// ./data/objects works on a fresh checkout.
func makeFileStoreDir(value string) error {
	_, raw := splitStorageID(value)
	if dir, ok := strings.CutPrefix(raw, "file://"); ok {
		return os.MkdirAll(dir, 0o755)
	}
	return nil
}

// featureLevelEnv caps the feature level this process reads and declares,
// so that an upgrade test runs this build as the previous release. It is
// not a flag: operators have no use for it.
const featureLevelEnv = "PICO_FEATURE_LEVEL"

func featureLevel() (domain.Level, error) {
	v := os.Getenv(featureLevelEnv)
	if v == "" {
		return domain.LevelCurrent, nil
	}
	l, err := strconv.ParseUint(v, 10, 32)
	if err != nil || l == 0 || domain.Level(l) > domain.LevelCurrent {
		return 0, fmt.Errorf("%s=%s: want a feature level from 1 to %d", featureLevelEnv, v, domain.LevelCurrent)
	}
	return domain.Level(l), nil
}
