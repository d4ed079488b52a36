package sqllog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/picomq/pico/adapters/internal/storage/wakeups"
	"github.com/picomq/pico/ports"
)

// ErrClosed is returned by Notifications after Close; other calls fail with
// the database's own "closed" error.
var ErrClosed = errors.New("sqllog: closed")

// Log is a metadata log stored in SQL. Safe for concurrent use, also by
// several processes sharing the database.
type Log struct {
	db      *bun.DB
	dialect dialect
	hub     *wakeups.Hub

	// life ends on Close and stops the Postgres listener.
	life     context.Context
	stop     context.CancelFunc
	listenMu sync.Mutex
	listenOn bool
	listenWG sync.WaitGroup
	closeMu  sync.Mutex
	closed   bool
}

var (
	_ ports.MetaLog     = (*Log)(nil)
	_ ports.LogNotifier = (*Log)(nil)
)

// Open connects to url (sqlite:PATH, sqlite://PATH, sqlite::memory:,
// sqlite://:memory:, postgres://… or postgresql://…) and creates the tables
// if they do not exist.
func Open(ctx context.Context, url string) (*Log, error) {
	// SQLite answers "busy" at once, without its busy handler, when several
	// processes switch a new file to WAL mode together: retry that briefly.
	backoff := 5 * time.Millisecond
	for deadline := time.Now().Add(10 * time.Second); ; {
		l, err := open(ctx, url)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return l, err
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

func open(ctx context.Context, url string) (*Log, error) {
	db, d, err := openDB(url)
	if err != nil {
		return nil, wrap("open", err)
	}
	bdb := bun.NewDB(db, d.bun)
	if err := bdb.PingContext(ctx); err != nil {
		_ = bdb.Close()
		return nil, wrap("open", err)
	}
	if err := createSchema(ctx, bdb, d); err != nil {
		_ = bdb.Close()
		return nil, wrap("create schema", err)
	}
	life, stop := context.WithCancel(context.Background())
	return &Log{db: bdb, dialect: d, hub: wakeups.New(), life: life, stop: stop}, nil
}

func openDB(url string) (*sql.DB, dialect, error) {
	t, err := parseTarget(url)
	if err != nil {
		return nil, dialect{}, err
	}
	if t.postgres {
		return openPostgres(t.dsn)
	}
	return openSQLite(t.dsn)
}

// Close stops notifications and closes the pool. Idempotent.
func (l *Log) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.stop()
	l.listenMu.Lock() // no listener starts after this point
	l.listenMu.Unlock()
	l.listenWG.Wait()
	l.hub.Close()
	return wrap("close", l.db.Close())
}

// wrap prefixes err with the package and operation; nil stays nil.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqllog: %s: %w", op, err)
}
