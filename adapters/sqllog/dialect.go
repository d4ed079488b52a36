package sqllog

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/schema"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect holds everything that differs between Postgres and SQLite; the
// rest of the package is one code path.
type dialect struct {
	bun schema.Dialect
	// schemaLock runs first in the schema transaction; empty when the
	// database already serialises writers.
	schemaLock string
	// appendSQL takes (index, payload, index) and affects one row when it
	// stored the row, none when the index is at or below the truncation point.
	appendSQL string
	// listenURL is the Postgres URL for LISTEN; empty means Append wakes
	// subscribers in process.
	listenURL string
	// numbered: the driver takes $1, $2… instead of ? placeholders.
	numbered bool
}

// bind adapts a query written with ? placeholders to the driver. Statements
// that carry payloads go to the driver with real parameters (binary bytea on
// Postgres) rather than through bun's client-side formatting, which would
// inline a 60 MB snapshot as a hex literal.
func (d dialect) bind(query string) string {
	if !d.numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// schemaLockKey is an arbitrary constant ("picometa" in ASCII) naming the
// advisory lock that serialises concurrent schema creation on Postgres.
const schemaLockKey = 0x7069636f6d657461

// notifyChannel is the Postgres channel that Append notifies.
const notifyChannel = "pico_meta_log"

// Postgres: FOR SHARE makes Append wait for a Truncate in flight and re-read
// the new point, so a stale writer cannot refill a truncated index. The
// notify runs in the same statement, so it is sent only if the insert commits.
const pgAppendSQL = `WITH point AS (SELECT through FROM meta_truncation WHERE id = 0 FOR SHARE),
ins AS (INSERT INTO meta_log (idx, payload) SELECT ?, ?::bytea FROM point WHERE point.through < ? RETURNING idx)
SELECT pg_notify('` + notifyChannel + `', idx::text) FROM ins`

// SQLite runs one writer at a time, so a plain subquery is enough.
const sqliteAppendSQL = `INSERT INTO meta_log (idx, payload) SELECT ?, ?
WHERE (SELECT through FROM meta_truncation WHERE id = 0) < ?`

func openPostgres(url string) (*sql.DB, dialect, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, dialect{}, err
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, dialect{
		bun:        pgdialect.New(),
		schemaLock: "SELECT pg_advisory_xact_lock(?)",
		appendSQL:  pgAppendSQL,
		listenURL:  url,
		numbered:   true,
	}, nil
}

// sqliteOptions: busy_timeout makes writers queue instead of failing, and
// immediate transactions take the write lock up front so a read-then-write
// transaction cannot deadlock with another writer.
const sqliteOptions = "_pragma=busy_timeout(5000)&_txlock=immediate"

func openSQLite(path string) (*sql.DB, dialect, error) {
	d := dialect{bun: sqlitedialect.New(), appendSQL: sqliteAppendSQL}
	if path == ":memory:" {
		db, err := sql.Open("sqlite", ":memory:?"+sqliteOptions)
		if err != nil {
			return nil, d, err
		}
		// Every connection to :memory: is a separate empty database, so
		// keep exactly one, forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		return db, d, nil
	}
	// WAL lets readers run beside the writer; FULL syncs every commit, so a
	// nil error from Append means the row survives power loss.
	dsn := path + "?" + sqliteOptions + "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, d, err
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	return db, d, nil
}

// isUniqueViolation reports whether err is a primary key or unique
// constraint failure in either database.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		code := liteErr.Code()
		return code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	}
	return false
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var liteErr *sqlite.Error
	return errors.As(err, &liteErr) && liteErr.Code()&0xff == sqlite3.SQLITE_BUSY
}
