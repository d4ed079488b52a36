package main

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/app/wal"
)

func TestServeFlagsTakeEnvUnlessGiven(t *testing.T) {
	t.Setenv("PICO_NODE_ID", "7")
	t.Setenv("PICO_META_URL", "sqlite::memory:")
	f, err := parseServe([]string{"--node-id", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if f.nodeID != 3 || f.metaURL != "sqlite::memory:" {
		t.Fatalf("node-id %d meta-url %q: want the flag (3) and the env value", f.nodeID, f.metaURL)
	}
	if f.httpAddress != "" || f.listen != "127.0.0.1:4437" {
		t.Fatalf("http-address %q listen %q: want no address given (derived from the bound listener) on the default port", f.httpAddress, f.listen)
	}
}

func TestServeFlagsValidateProtocolRoutingAndRemote(t *testing.T) {
	for _, args := range [][]string{
		{"--protocol", "grpc"},
		{"--routing", "anycast"},
		{"--auth", "maybe"},
		{"--listen", "0.0.0.0:4437"},
		{"--max-body-size", "0"},
		{"--failover-after-sec", "1.9"}, // fewer than four heartbeats
		{"--failover-after-sec", "-1"},
		{"--failover-after-sec", "NaN"},
		{"--failover-after-sec", "+Inf"},
		{"--failover-after-sec", "1e10"},
		{"--append-timeout-sec", "0"},
		{"--append-timeout-sec", "NaN"},
		{"--append-timeout-sec", "1e9"},
		{"--node-epoch", "4611686018427387904"}, // no room below the SQL log's bigint
	} {
		if _, err := parseServe(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := parseServe([]string{"--listen", "0.0.0.0:4437", "--insecure-allow-remote"}); err != nil {
		t.Fatalf("a remote listener with the explicit opt-out: %v", err)
	}
	if _, err := parseServe([]string{"--listen", "[::1]:0"}); err != nil {
		t.Fatalf("IPv6 loopback: %v", err)
	}
	for _, v := range []string{"0", "2", "10", "45.5", "86400"} {
		if _, err := parseServe([]string{"--failover-after-sec", v}); err != nil {
			t.Fatalf("--failover-after-sec %s: %v", v, err)
		}
	}
	f, err := parseServe(nil)
	if err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	if f.failoverSec != node.DefaultFailoverAfter.Seconds() {
		t.Fatalf("the default --failover-after-sec is %v, want node.DefaultFailoverAfter", f.failoverSec)
	}
}

func TestServeFlagsRejectBadEnv(t *testing.T) {
	t.Setenv("PICO_SLOTS", "many")
	if _, err := parseServe(nil); err == nil {
		t.Fatal("a non-numeric PICO_SLOTS was accepted")
	}
	t.Setenv("PICO_SLOTS", "1")
	t.Setenv("PICO_NODE_ID", "0")
	if _, err := parseServe(nil); err == nil {
		t.Fatal("node id 0 was accepted")
	}
}

func TestRedactURLHidesPassword(t *testing.T) {
	if got := redactURL("postgres://u:secret@h/db"); got != "postgres://u:***@h/db" {
		t.Fatalf("got %q", got)
	}
	if got := redactURL("sqlite:./data/meta.db"); got != "sqlite:./data/meta.db" {
		t.Fatalf("got %q", got)
	}
}

func TestStorageValues(t *testing.T) {
	id, raw := splitStorageID("-2@s3://bucket?region=us-east-1&endpoint=http://u@h:1")
	if id != "-2" || raw != "s3://bucket?region=us-east-1&endpoint=http://u@h:1" {
		t.Fatalf("split: %q %q", id, raw)
	}
	if id, raw := splitStorageID("file://./data"); id != "" || raw != "file://./data" {
		t.Fatalf("split without id: %q %q", id, raw)
	}
	var cfg wal.Config
	out, err := walParams("-2@s3://b?region=r&bulkBytes=1024&inflight=3&pipeline=2", &cfg)
	if err != nil || out != "-2@s3://b?region=r" || cfg.MaxBulkBytes != 1024 || cfg.MaxInFlight != 3 || cfg.Pipeline != 2 {
		t.Fatalf("wal params: %q %v %+v", out, err, cfg)
	}
	if _, err := walParams("file://x?inflight=0", &cfg); err == nil {
		t.Fatal("inflight=0 accepted")
	}
	for v, want := range map[string]time.Duration{"5ms": 5 * time.Millisecond, "0": -1, "0s": -1} {
		if out, err := walParams("file://x?linger="+v, &cfg); err != nil || out != "file://x" || cfg.MaxLinger != want {
			t.Fatalf("linger=%s: %q %v, MaxLinger %v, want %v", v, out, err, cfg.MaxLinger, want)
		}
	}
	for _, v := range []string{"-1ms", "5"} {
		if _, err := walParams("file://x?linger="+v, &cfg); err == nil {
			t.Fatalf("linger=%s accepted", v)
		}
	}
	if _, err := openStorage(t.Context(), "ftp://x"); err == nil {
		t.Fatal("an unknown scheme was accepted")
	}
}

// --shutdown-transfer is on unless the log is SQLite, and then bounds its
// transfers by --shutdown-drain-sec, 20 s unless given.
func TestServeStopPlan(t *testing.T) {
	const pg = "postgres://u@h/db"
	for _, tc := range []struct {
		args []string
		env  string // PICO_SHUTDOWN_TRANSFER
		want stopPlan
	}{
		{nil, "", stopPlan{}},
		{[]string{"--shutdown-drain-sec", "5"}, "", stopPlan{drain: 5 * time.Second}},
		{[]string{"--meta-url", pg}, "", stopPlan{drain: 20 * time.Second, transfer: true}},
		{[]string{"--meta-url", pg, "--shutdown-drain-sec", "5"}, "", stopPlan{drain: 5 * time.Second, transfer: true}},
		{[]string{"--meta-url", pg, "--shutdown-transfer=false"}, "", stopPlan{}},
		{[]string{"--shutdown-transfer"}, "", stopPlan{drain: 20 * time.Second, transfer: true}},
		{nil, "true", stopPlan{drain: 20 * time.Second, transfer: true}},
		{[]string{"--meta-url", pg}, "false", stopPlan{}},
	} {
		t.Setenv("PICO_SHUTDOWN_TRANSFER", tc.env)
		if tc.env == "" {
			os.Unsetenv("PICO_SHUTDOWN_TRANSFER")
		}
		f, err := parseServe(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := f.stopPlan(); got != tc.want {
			t.Errorf("%v with PICO_SHUTDOWN_TRANSFER=%q: %+v, want %+v", tc.args, tc.env, got, tc.want)
		}
	}
	if _, err := parseServe([]string{"--shutdown-transfer=maybe"}); err == nil {
		t.Error("--shutdown-transfer=maybe accepted")
	}
}

func TestLogFormat(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, format := range []string{"text", "json"} {
		if _, err := newLogger("info", format); err != nil {
			t.Errorf("--log-format %s: %v", format, err)
		}
	}
	if _, err := newLogger("info", "yaml"); err == nil || !strings.Contains(err.Error(), "want text or json") {
		t.Errorf("--log-format yaml: %v, want a refusal", err)
	}
}
