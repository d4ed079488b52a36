package e2e

import (
	"context"
	"net/url"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/sqllog"
	"github.com/picomq/pico/tests/s3test"
)

// TestServeRefusesABrokenSetup: a node whose object store or metadata log
// cannot serve it exits non-zero by itself, with a message that names what
// is wrong, and writes no metadata row.
func TestServeRefusesABrokenSetup(t *testing.T) {
	t.Run("missing-bucket", func(t *testing.T) {
		store := withBucket(t, s3test.URL(t), "pico-no-such-bucket")
		refusedWithoutRows(t, nodeConfig{dataDir: t.TempDir(), storageURL: store},
			`bucket "pico-no-such-bucket" does not exist`)
	})
	t.Run("refused-credentials", func(t *testing.T) {
		store := s3test.URL(t)
		t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
		refusedWithoutRows(t, nodeConfig{dataDir: t.TempDir(), storageURL: store},
			"refuses the credentials", "AWS_SECRET_ACCESS_KEY")
	})
	t.Run("unreachable-endpoint", func(t *testing.T) {
		store := "s3://pico?endpoint=" + url.QueryEscape("http://127.0.0.1:1") + "&pathStyle=true&region=us-east-1"
		t.Setenv("AWS_ACCESS_KEY_ID", "key")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		refusedWithoutRows(t, nodeConfig{dataDir: t.TempDir(), storageURL: store}, "cannot reach the store", "127.0.0.1:1")
	})
	t.Run("second-process-on-one-sqlite-log", func(t *testing.T) {
		dir := t.TempDir()
		first := startNode(t, nodeConfig{dataDir: dir})
		serveRefused(t, nodeConfig{dataDir: dir, storageDir: t.TempDir()}.args(),
			"meta.db is in use by another pico serve (pid ", "Postgres for a cluster")
		mustCreate(t, first.URL+"/still/served", "text/plain")
	})
	t.Run("another-clusters-log", func(t *testing.T) {
		dir := t.TempDir()
		east := startNode(t, nodeConfig{dataDir: dir, flags: []string{"--cluster-id", "east"}})
		east.Stop(t, syscall.SIGTERM)
		before := metaRows(t, dir)
		serveRefused(t, nodeConfig{dataDir: dir, flags: []string{"--cluster-id", "west"}}.args(),
			`belongs to cluster "east", not "west"`)
		if after := metaRows(t, dir); after != before {
			t.Errorf("the refused node wrote %d metadata rows", after-before)
		}
	})
}

// refusedWithoutRows runs a node of cfg, which must be refused with each
// fragment in its stderr, and checks that it left its log without a row.
func refusedWithoutRows(t *testing.T, cfg nodeConfig, fragments ...string) {
	t.Helper()
	start := time.Now()
	serveRefused(t, cfg.args(), fragments...)
	t.Logf("refused after %v", time.Since(start).Round(10*time.Millisecond))
	if n := metaRows(t, cfg.dataDir); n != 0 {
		t.Errorf("the refused node wrote %d metadata rows", n)
	}
}

// metaRows counts the rows of the SQLite metadata log in dir.
func metaRows(t *testing.T, dir string) int {
	t.Helper()
	log, err := sqllog.Open(context.Background(), "sqlite:"+filepath.Join(dir, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	rows, err := log.Read(context.Background(), 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// withBucket is storeURL naming another bucket.
func withBucket(t *testing.T, storeURL, bucket string) string {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = bucket
	return u.String()
}
