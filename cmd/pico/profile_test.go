package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigProfilesRoundTrip(t *testing.T) {
	path := isolate(t)
	pico(t, "", "config", "path").want(t, 0, path+"\n", "")
	pico(t, "", "config", "ls").want(t, 0, "", "")
	pico(t, "", "config", "set", "dev", "--endpoint", "http://a:1").want(t, 0, "", "saved profile dev (default)\n")
	pico(t, "", "--http2", "config", "set", "prod", "--endpoint", "http://b:2").want(t, 0, "", "saved profile prod\n")
	pico(t, "", "config", "set", "dev", "--protocol", "ds", "--no-http2").want(t, 0, "", "saved profile dev (default)\n")
	pico(t, "", "config", "ls").want(t, 0,
		"* dev endpoint=http://a:1 protocol=ds http2=false\n  prod endpoint=http://b:2 http2=true\n", "")
	pico(t, "", "config", "get").want(t, 0, "dev endpoint=http://a:1 protocol=ds http2=false\n", "")
	pico(t, "", "config", "get", "prod").want(t, 0, "prod endpoint=http://b:2 http2=true\n", "")
	pico(t, "", "config", "use", "prod").want(t, 0, "", "default profile prod\n")
	pico(t, "", "config", "rm", "prod").want(t, 0, "", "removed profile prod\n")
	pico(t, "", "config", "ls").want(t, 0, "  dev endpoint=http://a:1 protocol=ds http2=false\n", "")
	pico(t, "", "config", "get").want(t, 1, "", "pico: no default profile; name one\n")
	pico(t, "", "config", "use", "prod").want(t, 1, "", "pico: profile \"prod\" not found\n")
	pico(t, "", "config", "rm", "prod").want(t, 1, "", "pico: profile \"prod\" not found\n")

	data, _ := os.ReadFile(path)
	want := "[profiles]\n  [profiles.dev]\n    endpoint = \"http://a:1\"\n    protocol = \"ds\"\n    http2 = false\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
}

func TestConfigFileIsPrivateAndReplacedWhole(t *testing.T) {
	path := isolate(t)
	pico(t, "", "config", "set", "dev", "--endpoint", "http://a:1")
	pico(t, "", "config", "set", "dev", "--endpoint", "http://a:2")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", info.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestConfigSetRefusesBadInput(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"config", "set", "dev"},
		{"config", "set", "dev", "--http2", "--no-http2"},
		{"config", "set", "a b", "--endpoint", "http://a:1"},
		{"config", "frob"},
		{"config"},
		{"config", "rm"},
	} {
		if r := pico(t, "", args...); r.code != 2 {
			t.Fatalf("%q: %+v", args, r)
		}
	}
	for _, args := range [][]string{
		{"config", "set", "dev", "--protocol", "amqp"},
		{"config", "set", "dev", "--endpoint", "localhost"},
	} {
		if r := pico(t, "", args...); r.code != 1 {
			t.Fatalf("%q: %+v", args, r)
		}
	}
}

func TestConfigRejectsUnknownKeys(t *testing.T) {
	path := isolate(t)
	os.WriteFile(path, []byte("default_profile = \"x\"\n[profiles.x]\nendpont = \"http://a:1\"\n"), 0o600)
	r := pico(t, "", "config", "ls")
	if r.code != 1 || !strings.Contains(r.stderr, "unknown keys: profiles.x.endpont") {
		t.Fatalf("%+v", r)
	}
	if r := pico(t, "", "head", "/s"); r.code != 1 || !strings.Contains(r.stderr, "unknown keys") {
		t.Fatalf("a verb using the bad file: %+v", r)
	}
}

func TestDefaultProfileReachesTheServer(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a")
	pico(t, "", "config", "set", "local", "--endpoint", url)
	pico(t, "", "read", "/s").want(t, 0, "a\n", "")
}
