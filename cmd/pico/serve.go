package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/adapters/sqllog"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/domain"
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
	blockCache  uint64
	uploadBytes uint64
	uploadMs    uint
	drainSec    uint
	logLevel    string
}

func parseServe(args []string) (*serveFlags, error) {
	f := &serveFlags{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.UintVar(&f.nodeID, "node-id", 1, "stable id of this node in the cluster (1 or more)")
	fs.Uint64Var(&f.nodeEpoch, "node-epoch", 0, "epoch of this process; 0 picks the wall clock in ms, above any earlier one")
	fs.UintVar(&f.slots, "slots", 1, "placement weight; 0 takes no new streams")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:4437", "protocol listener address")
	fs.StringVar(&f.adminListen, "admin-listen", "127.0.0.1:9090", "admin listener address (probes, cluster view)")
	fs.BoolVar(&f.noAdmin, "no-admin", false, "do not start the admin listener")
	fs.StringVar(&f.httpAddress, "http-address", "", "URL clients and nodes reach this node at (default http://LISTEN)")
	fs.StringVar(&f.metaURL, "meta-url", "sqlite:./data/meta.db", "metadata log: sqlite:PATH, sqlite::memory: or postgres://…")
	fs.StringVar(&f.storage, "storage", "-2@file://./data/objects", "object store: [ID@]file://DIR or [ID@]s3://BUCKET?region=…&endpoint=…&pathStyle=true (credentials from AWS_*)")
	fs.StringVar(&f.wal, "wal", "", "object store for the WAL (default: --storage); bulkBytes=N and inflight=N parameters tune it")
	fs.Uint64Var(&f.walCache, "wal-cache-size", 64<<20, "bytes of appends buffered for the WAL before appenders wait")
	fs.Uint64Var(&f.blockCache, "block-cache-size", 256<<20, "bytes of committed data cached for reads")
	fs.Uint64Var(&f.uploadBytes, "wal-upload-threshold", 32<<20, "uncommitted bytes that start an upload to data objects")
	fs.UintVar(&f.uploadMs, "wal-upload-interval-ms", 1000, "interval of uploads to data objects")
	fs.UintVar(&f.drainSec, "shutdown-drain-sec", 0, "on SIGTERM/SIGINT, report not-ready for this long before closing")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.Usage = usageWithEnv(fs, "pico serve [flags]")
	if err := parseWithEnv(fs, args); err != nil {
		return nil, err
	}
	if f.nodeID == 0 || f.nodeID > 1<<31 {
		return nil, fmt.Errorf("--node-id must be between 1 and %d", 1<<31)
	}
	if f.httpAddress == "" {
		f.httpAddress = "http://" + f.listen
	}
	return f, nil
}

func serve(args []string) error {
	f, err := parseServe(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger, err := newLogger(f.logLevel)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log, err := openMetaLog(ctx, f.metaURL)
	if err != nil {
		return err
	}
	defer log.Close()
	cfg := node.Config{ID: domain.NodeID(f.nodeID), Epoch: f.nodeEpoch, Address: f.httpAddress,
		Slots: uint32(f.slots), Log: log, Lease: log.Lease(), Logger: logger}
	if err := f.storageConfig(ctx, &cfg); err != nil {
		return err
	}
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer n.Close()
	var admin *http.Server
	if !f.noAdmin {
		if admin, err = listenAdmin(f.adminListen, n, logger); err != nil {
			return err
		}
	}
	logger.Info("pico node serving", "node", f.nodeID, "epoch", n.Epoch(), "meta", redactURL(f.metaURL),
		"storage", f.storage, "admin", adminURL(f), "note", "the stream protocol listener is not implemented yet")
	<-ctx.Done()
	return shutdown(n, admin, time.Duration(f.drainSec)*time.Second, logger)
}

func listenAdmin(addr string, n *node.Node, logger *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener: %w", err)
	}
	srv := &http.Server{Handler: adminhttp.New(n), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin listener stopped", "err", err)
		}
	}()
	return srv, nil
}

// shutdown drains (not ready, still serving), then stops the listeners.
func shutdown(n *node.Node, admin *http.Server, drain time.Duration, logger *slog.Logger) error {
	n.Drain()
	if drain > 0 {
		logger.Info("draining before shutdown", "for", drain)
		time.Sleep(drain)
	}
	if admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = admin.Shutdown(ctx)
	}
	logger.Info("pico node stopped")
	return nil
}

func openMetaLog(ctx context.Context, url string) (*sqllog.Log, error) {
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok && !strings.Contains(path, ":memory:") {
		path = strings.TrimPrefix(path, "//")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("create metadata directory: %w", err)
		}
	}
	return sqllog.Open(ctx, url)
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
	slog.SetDefault(logger)
	return logger, nil
}

func adminURL(f *serveFlags) string {
	if f.noAdmin {
		return "off"
	}
	return "http://" + f.adminListen
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

// storageConfig opens the object stores and applies the engine tuning flags.
func (f *serveFlags) storageConfig(ctx context.Context, cfg *node.Config) error {
	if err := makeFileStoreDir(f.storage); err != nil {
		return err
	}
	store, err := openStorage(ctx, f.storage)
	if err != nil {
		return err
	}
	cfg.Store = store
	if f.wal != "" {
		raw, err := walParams(f.wal, &cfg.WAL)
		if err != nil {
			return err
		}
		if cfg.WALStore, err = openStorage(ctx, raw); err != nil {
			return err
		}
	}
	cfg.WAL.MaxBufferedBytes = int(f.walCache)
	cfg.Engine.BlockCacheBytes = int(f.blockCache)
	cfg.Engine.UploadThresholdBytes = int(f.uploadBytes)
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
