package pgtest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestURLGivesFreshDatabaseDroppedAfter(t *testing.T) {
	admin := adminConn(t) // skips, or fails, without a server
	var name string
	t.Run("user", func(t *testing.T) {
		url := URL(t)
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var tables int
		err = conn.QueryRow(t.Context(),
			"SELECT current_database(), (SELECT count(*) FROM pg_tables WHERE schemaname = 'public')").Scan(&name, &tables)
		if err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Fatalf("new database %s has %d tables", name, tables)
		}
		if other := URL(t); other == url {
			t.Fatalf("two calls gave the same URL %s", url)
		}
	})
	if name == "" {
		t.Fatal("the subtest did not run")
	}
	var exists bool
	err := admin.QueryRow(t.Context(),
		"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil || exists {
		t.Fatalf("database %s after the test: exists=%v err=%v, want dropped", name, exists, err)
	}
}

func adminConn(t *testing.T) *pgx.Conn {
	conn, err := pgx.Connect(t.Context(), adminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// stoppingTB records how a helper stopped the test without stopping this one.
type stoppingTB struct {
	testing.TB
	how string
}

var errStopped = errors.New("stopped")

func (s *stoppingTB) Helper()               {}
func (s *stoppingTB) Fatalf(string, ...any) { s.how = "fatal"; panic(errStopped) }
func (s *stoppingTB) Skipf(string, ...any)  { s.how = "skip"; panic(errStopped) }
func (s *stoppingTB) Cleanup(func())        {}
func (s *stoppingTB) run(f func(testing.TB)) string {
	defer func() {
		if r := recover(); r != nil && r != errStopped {
			panic(r)
		}
	}()
	f(s)
	return s.how
}

func TestMissingServerSkipsUnlessRequired(t *testing.T) {
	t.Setenv(EnvURL, "")
	t.Setenv(EnvRequire, "")
	tb := &stoppingTB{TB: t}
	if tb.run(func(tb testing.TB) { URL(tb) }); tb.how != "skip" {
		t.Fatalf("without %s: %q, want skip", EnvURL, tb.how)
	}
	t.Setenv(EnvRequire, "1")
	tb = &stoppingTB{TB: t}
	if tb.run(func(tb testing.TB) { URL(tb) }); tb.how != "fatal" {
		t.Fatalf("with %s=1: %q, want fatal", EnvRequire, tb.how)
	}
}

func TestRestartWithoutCommandFails(t *testing.T) {
	t.Setenv(EnvRestart, "")
	tb := &stoppingTB{TB: t}
	if tb.run(Restart); tb.how != "fatal" {
		t.Fatalf("Restart without %s: %q, want fatal", EnvRestart, tb.how)
	}
	t.Setenv(EnvRestart, "exit 3")
	tb = &stoppingTB{TB: t}
	if tb.run(Restart); tb.how != "fatal" {
		t.Fatalf("Restart with a failing command: %q, want fatal", tb.how)
	}
}

// TestPauseStallsTheServer: a query sent while the server is paused is
// answered only once the pause ends.
func TestPauseStallsTheServer(t *testing.T) {
	url := URL(t) // skips, or fails, without a server
	if os.Getenv(EnvPIDFile) == "" {
		t.Skipf("%s is not set: tests/run.sh sets it for the server it starts", EnvPIDFile)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	const pause = 600 * time.Millisecond
	paused := make(chan error, 1)
	go func() { paused <- Pause(pause) }()
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	var one int
	if err := conn.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("a query across the pause: %d %v", one, err)
	}
	if took := time.Since(began); took < pause/2 {
		t.Errorf("a query sent during a %v pause was answered after %v", pause, took)
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
}
