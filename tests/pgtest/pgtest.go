// Package pgtest gives tests a fresh Postgres database on the server named by
// PICOMQ_PG_URL, and a way to restart that server.
//
// Without PICOMQ_PG_URL, Postgres tests skip, unless PICOMQ_REQUIRE_PG=1 (as
// tests/run.sh sets), which turns the skip into a failure so that CI never
// passes without running them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables read by this package.
const (
	EnvURL     = "PICOMQ_PG_URL"      // admin URL of a server where tests may create databases
	EnvRequire = "PICOMQ_REQUIRE_PG"  // "1": a missing server fails instead of skipping
	EnvRestart = "PICOMQ_PG_RESTART"  // shell command that restarts the server in immediate mode
	EnvPIDFile = "PICOMQ_PG_PID_FILE" // the server's postmaster.pid, for tests that pause it
)

// URL creates an empty database with a unique name and returns its URL. The
// database is dropped, with its open connections, when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	admin := adminURL(t)
	name := "pico_test_" + randomHex(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { dropDatabase(t, admin, name) })
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Restart runs the command in PICOMQ_PG_RESTART and fails the test if it is
// unset or fails. Every connection to the server breaks, so no other package's
// Postgres tests may run meanwhile (tests/run.sh runs packages one at a time).
func Restart(t testing.TB) {
	t.Helper()
	command := os.Getenv(EnvRestart)
	if command == "" {
		t.Fatalf("pgtest: %s is not set; run the tests through tests/run.sh", EnvRestart)
	}
	out, err := exec.Command("sh", "-c", command).CombinedOutput()
	if err != nil {
		t.Fatalf("pgtest: restart Postgres: %v\n%s", err, out)
	}
}

func adminURL(t testing.TB) string {
	admin := os.Getenv(EnvURL)
	if admin != "" {
		if !strings.HasPrefix(admin, "postgres://") && !strings.HasPrefix(admin, "postgresql://") {
			t.Fatalf("pgtest: %s must be a postgres:// URL", EnvURL)
		}
		return admin
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("pgtest: %s=1 but %s is not set", EnvRequire, EnvURL)
	}
	t.Skipf("pgtest: %s is not set; skipping Postgres test (tests/run.sh starts a server)", EnvURL)
	return ""
}

func dropDatabase(t testing.TB, admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: drop database %s: %v", name, err)
	}
}

// adminExec runs one statement on its own connection; CREATE and DROP
// DATABASE cannot run inside a transaction or a pooled session.
func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("pgtest: random name: %v", err)
	}
	return hex.EncodeToString(b)
}
