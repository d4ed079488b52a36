package main

import "testing"

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
	if f.httpAddress != "http://127.0.0.1:4437" {
		t.Fatalf("http-address %q, want derived from --listen", f.httpAddress)
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
