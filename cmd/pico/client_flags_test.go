package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestGlobalFlagsGoBeforeOrAfterTheVerb(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s")
	for _, args := range [][]string{
		{"--endpoint", url, "head", "/s"},
		{"head", "/s", "--endpoint", url},
		{"head", "--endpoint=" + url, "/s"},
		{"--http2=false", "head", "/s", "-endpoint", url},
	} {
		pico(t, "", args...).want(t, 0, "start=0 next=0 closed=false type=text/plain\n", "")
	}
}

// settingsFor parses args as a verb would and resolves the settings.
func settingsFor(t *testing.T, args ...string) (profile, error) {
	t.Helper()
	cmd := newCommand("test", "test")
	if _, err := cmd.parse(args, 0, 0); err != nil {
		t.Fatal(err)
	}
	return cmd.settings()
}

func TestSettingsComeFromFlagThenEnvThenProfileThenDefault(t *testing.T) {
	isolate(t)
	if p, err := settingsFor(t); err != nil || p.String() != "endpoint=http://127.0.0.1:4437 protocol=pico http2=false" {
		t.Fatalf("defaults: %v %v", p, err)
	}
	pico(t, "", "config", "set", "dev", "--endpoint", "http://profile:1", "--protocol", "ds", "--http2").want(t, 0, "", "saved profile dev (default)\n")
	if p, _ := settingsFor(t); p.String() != "endpoint=http://profile:1 protocol=ds http2=true" {
		t.Fatalf("profile: %v", p)
	}
	t.Setenv("PICO_ENDPOINT", "http://env:2")
	t.Setenv("PICO_HTTP2", "false")
	if p, _ := settingsFor(t); p.String() != "endpoint=http://env:2 protocol=ds http2=false" {
		t.Fatalf("env over profile: %v", p)
	}
	if p, _ := settingsFor(t, "--endpoint", "http://flag:3", "--http2", "--protocol", "pico"); p.String() != "endpoint=http://flag:3 protocol=pico http2=true" {
		t.Fatalf("flags over env: %v", p)
	}
	t.Setenv("PICO_HTTP2", "maybe")
	if _, err := settingsFor(t); err == nil {
		t.Fatal("PICO_HTTP2=maybe was accepted")
	}
}

func TestANamedProfileMustExist(t *testing.T) {
	isolate(t)
	if _, err := settingsFor(t, "--profile", "nope"); err == nil || !strings.Contains(err.Error(), `profile "nope" not found`) {
		t.Fatalf("--profile nope: %v", err)
	}
	t.Setenv("PICO_PROFILE", "nope")
	if _, err := settingsFor(t, "--endpoint", "http://x:1", "--protocol", "pico", "--http2"); err == nil {
		t.Fatal("PICO_PROFILE naming a missing profile was accepted")
	}
	pico(t, "", "config", "set", "a", "--endpoint", "http://a:1")
	pico(t, "", "config", "set", "b", "--endpoint", "http://b:1")
	if p, err := settingsFor(t, "--profile", "b"); err != nil || p.Endpoint != "http://b:1" {
		t.Fatalf("--profile b over PICO_PROFILE: %v %v", p, err)
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	isolate(t)
	for _, verb := range [][]string{{"ls"}, {"trim", "/s", "--seq", "1"}} {
		if r := pico(t, "", append(verb, "--protocol", "ds")...); r.code != 1 ||
			!strings.Contains(r.stderr, verb[0]+" is Pico-only") || !strings.Contains(r.stderr, "use --protocol pico") {
			t.Fatalf("%s --protocol ds: %+v", verb[0], r)
		}
	}
	for _, args := range [][]string{{"--protocol", "amqp"}, {"--endpoint", "localhost:4437"}} {
		if r := pico(t, "", append([]string{"head", "/s"}, args...)...); r.code != 1 {
			t.Fatalf("%v: %+v", args, r)
		}
	}
}

func TestUsageErrorsExit2AndHelpExits0(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{nil, {"frobnicate"}, {"--nope", "head"}, {"head"}, {"head", "/a", "/b"},
		{"head", "/s", "--from", "1"}, {"ls", "extra"}, {"tail", "/s", "-n", "-1"}, {"--endpoint", "x", "serve"}} {
		if r := pico(t, "", args...); r.code != 2 || !strings.HasPrefix(r.stderr, "pico: ") || r.stdout != "" {
			t.Fatalf("%q: %+v", args, r)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		if r := pico(t, "", args...); r.code != 0 || !strings.Contains(r.stdout, "append") || r.stderr != "" {
			t.Fatalf("%q: %+v", args, r)
		}
	}
	for _, args := range [][]string{{"help", "read"}, {"read", "-h"}, {"read", "/s", "--help"}} {
		if r := pico(t, "", args...); r.code != 0 || !strings.Contains(r.stdout, "--from") || !strings.Contains(r.stdout, "PICO_ENDPOINT") {
			t.Fatalf("%q: %+v", args, r)
		}
	}
	if r := pico(t, "", "help", "serve"); r.code != 0 || !strings.Contains(r.stdout, "--listen") || !strings.Contains(r.stdout, "ID@") {
		t.Fatalf("help serve: %+v", r)
	}
}

// TestMistakesSuggestTheNearestName: an unknown command or flag is one
// line naming the nearest one, and a pointer to the help, not the usage.
func TestMistakesSuggestTheNearestName(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"craete", "/s"}, `pico: unknown command "craete" (did you mean create?)`},
		{[]string{"--endpiont", "x", "ls"}, "pico: unknown flag --endpiont (did you mean --endpoint?)"},
		{[]string{"create", "/s", "--ttll", "5"}, "pico: unknown flag --ttll (did you mean --ttl?)"},
		{[]string{"create", "/s", "--zzzzzz"}, "pico: unknown flag --zzzzzz\n"},
	} {
		r := pico(t, "", tc.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.says) || strings.Contains(r.stderr, "commands:") {
			t.Errorf("%q: %+v, want exit 2 and %q", tc.args, r, tc.says)
		}
	}
}

func TestExitCodesByStatus(t *testing.T) {
	for status, want := range map[int]int{404: exitNotFound, 409: exitConflict, 412: exitConflict, 401: exitAuth, 403: exitAuth, 500: exitFailure, 503: exitFailure, 0: exitFailure} {
		if got := exitCode(status); got != want {
			t.Errorf("status %d: exit %d, want %d", status, got, want)
		}
	}
}

func TestVersionNamesTheGoVersion(t *testing.T) {
	r := pico(t, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pico ") || !strings.Contains(r.stdout, runtime.Version()) {
		t.Fatalf("version: %+v", r)
	}
}

func TestDoubleDashEndsFlags(t *testing.T) {
	cmd := newCommand("test", "test")
	args, err := cmd.parse([]string{"a", "--endpoint", "http://x:1", "--", "--b", "c"}, 0, 9)
	if err != nil || strings.Join(args, " ") != "a --b c" || cmd.globals.endpoint != "http://x:1" {
		t.Fatalf("%q %v %q", args, err, cmd.globals.endpoint)
	}
}

func TestClientMainIsWired(t *testing.T) {
	isolate(t)
	saved := os.Stderr
	os.Stderr, _ = os.Open(os.DevNull)
	defer func() { os.Stderr = saved }()
	if code := clientMain([]string{"help"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestNearestPrefersAPrefixThenOrder(t *testing.T) {
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"us", []string{"ls", "use", "rm"}, "use"},
		{"nodez", []string{"nodes", "cluster"}, "nodes"},
		{"xyz", []string{"ls", "rm"}, ""},
		{"lss", []string{"ls", "rm"}, "ls"},
	} {
		if got := nearest(tc.word, tc.candidates); got != tc.want {
			t.Errorf("nearest(%q, %q) = %q, want %q", tc.word, tc.candidates, got, tc.want)
		}
	}
}
