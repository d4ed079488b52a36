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
	n, err := node.Start(ctx, node.Config{ID: domain.NodeID(f.nodeID), Epoch: f.nodeEpoch, Address: f.httpAddress,
		Slots: uint32(f.slots), Log: log, Lease: log.Lease(), Logger: logger})
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
		"admin", adminURL(f), "note", "the stream protocol listener is not implemented yet")
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
