package conformance_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/sqllog"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/conformance"
	"github.com/picomq/pico/tests/pgtest"
)

// openSQL opens a log on url and closes it when the test ends.
func openSQL(t *testing.T, url string) *sqllog.Log {
	t.Helper()
	log, err := sqllog.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { _ = log.Close() })
	return log
}

func sqliteFile(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "meta.db")
}

func sqliteMemory(*testing.T) string { return "sqlite::memory:" }

func postgres(t *testing.T) string { return pgtest.URL(t) }

// sharedStore opens a fresh store at the URL that fresh makes, and lets the
// suite open more handles onto it.
func sharedStore(fresh func(t *testing.T) string) conformance.MetaLogOpener {
	return func(t *testing.T) (ports.MetaLog, func() ports.MetaLog) {
		url := fresh(t)
		return openSQL(t, url), func() ports.MetaLog { return openSQL(t, url) }
	}
}

// singleHandle opens a fresh store that no second handle can reach.
func singleHandle(fresh func(t *testing.T) string) conformance.MetaLogOpener {
	return func(t *testing.T) (ports.MetaLog, func() ports.MetaLog) {
		return openSQL(t, fresh(t)), nil
	}
}

func sqlLease(fresh func(t *testing.T) string) conformance.LeaseOpener {
	return func(t *testing.T) ports.Lease { return openSQL(t, fresh(t)).Lease() }
}

func TestMetaLog(t *testing.T) {
	t.Run("memlog", func(t *testing.T) {
		conformance.MetaLog(t, func(t *testing.T) (ports.MetaLog, func() ports.MetaLog) {
			log := memlog.New()
			t.Cleanup(func() { _ = log.Close() })
			return log, nil
		})
	})
	t.Run("sqlite-file", func(t *testing.T) { conformance.MetaLog(t, sharedStore(sqliteFile)) })
	t.Run("sqlite-memory", func(t *testing.T) { conformance.MetaLog(t, singleHandle(sqliteMemory)) })
	t.Run("postgres", func(t *testing.T) { conformance.MetaLog(t, sharedStore(postgres)) })
}

func TestLease(t *testing.T) {
	t.Run("memlog", func(t *testing.T) {
		conformance.Lease(t, func(*testing.T) ports.Lease { return memlog.New().Lease() })
	})
	t.Run("sqlite-file", func(t *testing.T) { conformance.Lease(t, sqlLease(sqliteFile)) })
	t.Run("sqlite-memory", func(t *testing.T) { conformance.Lease(t, sqlLease(sqliteMemory)) })
	t.Run("postgres", func(t *testing.T) { conformance.Lease(t, sqlLease(postgres)) })
}

func sqlHeartbeats(fresh func(t *testing.T) string, shared bool) conformance.HeartbeatsOpener {
	return func(t *testing.T) (ports.Heartbeats, func() ports.Heartbeats) {
		url := fresh(t)
		h := openSQL(t, url).Heartbeats()
		if !shared {
			return h, nil
		}
		return h, func() ports.Heartbeats { return openSQL(t, url).Heartbeats() }
	}
}

func TestHeartbeats(t *testing.T) {
	t.Run("memlog", func(t *testing.T) {
		conformance.Heartbeats(t, func(*testing.T) (ports.Heartbeats, func() ports.Heartbeats) {
			log := memlog.New()
			return log.Heartbeats(), func() ports.Heartbeats { return log.Heartbeats() }
		})
	})
	t.Run("sqlite-file", func(t *testing.T) { conformance.Heartbeats(t, sqlHeartbeats(sqliteFile, true)) })
	t.Run("sqlite-memory", func(t *testing.T) { conformance.Heartbeats(t, sqlHeartbeats(sqliteMemory, false)) })
	t.Run("postgres", func(t *testing.T) { conformance.Heartbeats(t, sqlHeartbeats(postgres, true)) })
}
