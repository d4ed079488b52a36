package sqllog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

func TestSQLiteFileSettings(t *testing.T) {
	ctx := context.Background()
	log, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	var synchronous, busy int
	// Hold several connections at once so the pragmas are seen on more than one.
	modes := make([]string, 4)
	var wg sync.WaitGroup
	for i := range modes {
		wg.Go(func() {
			if err := log.db.NewRaw("PRAGMA journal_mode").Scan(ctx, &modes[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, mode := range modes {
		if mode != "wal" {
			t.Fatalf("journal_mode = %q on some connection, want wal", mode)
		}
	}
	if err := log.db.NewRaw("PRAGMA synchronous").Scan(ctx, &synchronous); err != nil {
		t.Fatal(err)
	}
	if err := log.db.NewRaw("PRAGMA busy_timeout").Scan(ctx, &busy); err != nil {
		t.Fatal(err)
	}
	if synchronous != 2 || busy != 5000 {
		t.Fatalf("synchronous=%d busy_timeout=%d, want 2 (FULL), 5000", synchronous, busy)
	}
}

func TestSQLiteMemoryUsesOneConnection(t *testing.T) {
	log, err := Open(context.Background(), "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if n := log.db.Stats().MaxOpenConnections; n != 1 {
		t.Fatalf("MaxOpenConnections = %d, want 1", n)
	}
}

func TestSQLiteConcurrentOpen(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "meta.db")
	openConcurrently(t, url, 6)
}

// openConcurrently opens n handles on url at once, as processes starting
// together would, and checks each created or found the schema.
func openConcurrently(t *testing.T, url string, n int) {
	t.Helper()
	ctx := context.Background()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			log, err := Open(ctx, url)
			if err == nil {
				_, err = log.LastIndex(ctx)
				log.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("handle %d: %v", i, err)
		}
	}
}
