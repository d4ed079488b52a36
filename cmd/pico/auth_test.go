package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/picomq/pico/domain"
)

// wireToken is a wire token for id whose secret is 32 bytes of b.
func wireToken(id string, b byte) string {
	return domain.FormatToken(domain.Credential{ID: id, Secret: bytes.Repeat([]byte{b}, 32)})
}

// secretOf is the secret part of a wire token, which no output may show.
func secretOf(wire string) string {
	_, secret, _ := strings.Cut(wire, ".")
	return secret
}

// authGate fronts a fake server: it records every request and, when want
// is set, answers 401 to a request without that Authorization; status,
// when set, answers every request.
type authGate struct {
	mu       sync.Mutex
	want     string
	status   int
	requests []string // "METHOD URI AUTHORIZATION"
	next     http.Handler
}

func (g *authGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	auth := r.Header.Get("Authorization")
	g.requests = append(g.requests, r.Method+" "+r.RequestURI+" "+auth)
	want, status := g.want, g.status
	g.mu.Unlock()
	switch {
	case want != "" && auth != want:
		fakeError(w, http.StatusUnauthorized, "unauthorized", "no valid credential")
	case status != 0:
		fakeError(w, status, http.StatusText(status), "refused")
	default:
		g.next.ServeHTTP(w, r)
	}
}

func (g *authGate) set(want string, status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.want, g.status = want, status
}

func (g *authGate) seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.requests...)
}

// last is the last request's Authorization.
func (g *authGate) last(t *testing.T) string {
	t.Helper()
	seen := g.seen()
	if len(seen) == 0 {
		t.Fatal("the server saw no request")
	}
	parts := strings.SplitN(seen[len(seen)-1], " ", 3)
	return parts[2]
}

func gated(t *testing.T, next http.Handler) (*authGate, string) {
	g := &authGate{next: next}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, srv.URL
}

func gatedPico(t *testing.T) (*authGate, string) {
	return gated(t, &fakePico{streams: map[string]*fakeStream{}, pageSize: 1000, listPage: 1000})
}

func gatedDS(t *testing.T) (*authGate, string) {
	return gated(t, &fakeDS{streams: map[string]*fakeDSStream{}, pageSize: 1000})
}

// credentialsFor is the credentials file beside the isolated config.
func credentialsFor(config string) string {
	return filepath.Join(filepath.Dir(config), "credentials.toml")
}

func TestTheTokenComesFromTheFlagThenPICO_TOKENThenTheStoredOne(t *testing.T) {
	config := isolate(t)
	g, url := gatedPico(t)
	flagToken, envToken, storedToken := wireToken("flag", 1), wireToken("env", 2), wireToken("stored", 3)
	sent := func(args ...string) string {
		t.Helper()
		pico(t, "", append([]string{"ls", "--endpoint", url}, args...)...).want(t, 0, "", "")
		return g.last(t)
	}
	if got := sent(); got != "" {
		t.Fatalf("with no token anywhere the server saw Authorization %q", got)
	}
	pico(t, storedToken+"\n", "auth", "login").want(t, 0, "",
		"stored token stored for profile default in "+credentialsFor(config)+"\n")
	if got := sent(); got != "Bearer "+storedToken {
		t.Fatalf("stored: the server saw %q", got)
	}
	t.Setenv("PICO_TOKEN", envToken)
	if got := sent(); got != "Bearer "+envToken {
		t.Fatalf("PICO_TOKEN over the stored token: the server saw %q", got)
	}
	if got := sent("--token", flagToken); got != "Bearer "+flagToken {
		t.Fatalf("--token over PICO_TOKEN: the server saw %q", got)
	}
	if got := sent("--token=" + flagToken); got != "Bearer "+flagToken {
		t.Fatalf("--token=: the server saw %q", got)
	}
}

func TestEachProfileHasItsOwnStoredToken(t *testing.T) {
	isolate(t)
	g, url := gatedPico(t)
	devToken, prodToken := wireToken("dev", 1), wireToken("prod", 2)
	pico(t, "", "config", "set", "dev", "--endpoint", url).want(t, 0, "", "saved profile dev (default)\n")
	pico(t, "", "config", "set", "prod", "--endpoint", url).want(t, 0, "", "saved profile prod\n")
	pico(t, devToken, "auth", "login").want(t, 0, "", fmt.Sprintf("stored token dev for profile dev in %s\n", credentialsFor(os.Getenv("PICO_CONFIG"))))
	if r := pico(t, "", "auth", "login", "--profile", "prod", "--token", prodToken); r.code != 0 {
		t.Fatalf("login --profile prod: %+v", r)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"ls"}, devToken},
		{"", []string{"ls", "--profile", "prod"}, prodToken},
		{"prod", []string{"ls"}, prodToken},
		{"prod", []string{"ls", "--profile", "dev"}, devToken},
	} {
		t.Setenv("PICO_PROFILE", tc.env)
		pico(t, "", tc.args...).want(t, 0, "", "")
		if got := g.last(t); got != "Bearer "+tc.want {
			t.Fatalf("PICO_PROFILE=%q %q: the server saw %q", tc.env, tc.args, got)
		}
	}
	t.Setenv("PICO_PROFILE", "")
	pico(t, "", "config", "use", "prod")
	pico(t, "", "ls").want(t, 0, "", "")
	if got := g.last(t); got != "Bearer "+prodToken {
		t.Fatalf("after config use prod the server saw %q", got)
	}
}

func TestEveryVerbSendsTheToken(t *testing.T) {
	isolate(t)
	token := wireToken("svc/ingest", 7)
	for _, proto := range []string{"pico", "ds"} {
		g, url := gatedPico(t)
		verbs := [][]string{{"create", "/s", "--content-type", "text/plain"}, {"append", "/s"}, {"read", "/s"},
			{"tail", "/s"}, {"head", "/s"}, {"ls"}, {"trim", "/s", "--seq", "1"}, {"close", "/s"}, {"delete", "/s"},
			{"bench", "-d", "50ms", "-w", "2"}}
		if proto == "ds" {
			g, url = gatedDS(t)
			verbs = [][]string{{"create", "/s", "--content-type", "text/plain"}, {"append", "/s"}, {"read", "/s"},
				{"tail", "/s"}, {"head", "/s"}, {"close", "/s"}, {"delete", "/s"}, {"bench", "-d", "50ms", "-w", "2"}}
		}
		g.set("Bearer "+token, 0)
		t.Setenv("PICO_ENDPOINT", url)
		t.Setenv("PICO_PROTOCOL", proto)
		for _, args := range verbs {
			if r := pico(t, "a\n", append(args, "--token", token)...); r.code != 0 {
				t.Fatalf("%s %q: %+v", proto, args, r)
			}
		}
		seen := g.seen()
		for _, req := range seen {
			if !strings.HasSuffix(req, " Bearer "+token) {
				t.Fatalf("%s: a request went without the token: %q", proto, req)
			}
		}
		if len(seen) < len(verbs) {
			t.Fatalf("%s: %d requests for %d verbs", proto, len(seen), len(verbs))
		}
		r := pico(t, "", "head", "/s")
		if r.code != exitAuth || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "pico auth login") {
			t.Fatalf("%s: head without a token: %+v", proto, r)
		}
	}
}

func TestAMalformedTokenIsRefusedBeforeAnyRequest(t *testing.T) {
	config := isolate(t)
	g, url := gatedPico(t)
	const bad = "c3Zj.c2VjcmV0" // "svc" and a secret of 6 bytes, too short
	t.Setenv("PICO_ENDPOINT", url)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	verbs := [][]string{{"head", "/s"}, {"ls"}, {"read", "/s"}, {"bench", "-d", "50ms"}, {"admin", "nodes"},
		{"admin", "tokens", "ls"}, {"auth", "status"}}
	for _, tc := range []struct {
		name, source string
		setup        func()
		args         []string
	}{
		{"flag", "--token", func() {}, []string{"--token", bad}},
		{"empty flag", "--token", func() {}, []string{"--token", ""}},
		{"env", "PICO_TOKEN", func() { t.Setenv("PICO_TOKEN", bad) }, nil},
		{"stored", credentialsFor(config), func() {
			t.Setenv("PICO_TOKEN", "")
			os.WriteFile(credentialsFor(config), []byte("[profiles.default]\ntoken = \""+bad+"\"\n"), 0o600)
		}, nil},
	} {
		tc.setup()
		for _, verb := range verbs {
			r := pico(t, "", append(verb, tc.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "pico: the token from "+tc.source+": malformed credential") {
				t.Fatalf("%s, %q: %+v", tc.name, verb, r)
			}
			if strings.Contains(r.stderr+r.stdout, secretOf(bad)) {
				t.Fatalf("%s, %q: the output shows the secret: %+v", tc.name, verb, r)
			}
		}
	}
	if seen := g.seen(); len(seen) != 0 {
		t.Fatalf("the server saw %q", seen)
	}
}

func TestAnUnreadableCredentialsFileSaysWhereNotWhat(t *testing.T) {
	config := isolate(t)
	os.WriteFile(credentialsFor(config), []byte("[profiles.default]\ntoken = c2VjcmV0\n"), 0o600)
	r := pico(t, "", "ls")
	if r.code != 1 || r.stderr != "pico: credentials "+credentialsFor(config)+": not valid TOML at line 2\n" {
		t.Fatalf("%+v", r)
	}
	os.WriteFile(credentialsFor(config), []byte("[profiles.default]\ntokn = \"c2VjcmV0\"\n"), 0o600)
	if r := pico(t, "", "ls"); r.code != 1 || !strings.Contains(r.stderr, "unknown key profiles.default.tokn") || strings.Contains(r.stderr, "c2VjcmV0") {
		t.Fatalf("%+v", r)
	}
}

func TestLoginStoresTheTokenInAPrivateFileBesideTheConfig(t *testing.T) {
	isolate(t)
	dir := filepath.Join(t.TempDir(), "fresh", "pico")
	t.Setenv("PICO_CONFIG", filepath.Join(dir, "config.toml"))
	path := filepath.Join(dir, "credentials.toml")
	first, second := wireToken("svc/ingest", 9), wireToken("ops", 8)
	pico(t, first+"\n", "auth", "login").want(t, 0, "", "stored token svc/ingest for profile default in "+path+"\n")
	pico(t, "ignored\n", "auth", "login", "--profile", "prod", "--token", second).want(t, 0, "",
		"stored token ops for profile prod in "+path+"\n")
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %v", p, info.Mode().Perm(), err, want)
		}
	}
	var stored struct {
		Profiles map[string]struct{ Token string }
	}
	if _, err := toml.DecodeFile(path, &stored); err != nil || stored.Profiles["default"].Token != first ||
		stored.Profiles["prod"].Token != second || len(stored.Profiles) != 2 {
		t.Fatalf("file holds %+v (%v)", stored, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "credentials.toml" {
		t.Fatalf("the directory holds %v, want the credentials file alone", entries)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "config.toml"))
	if strings.Contains(string(data), secretOf(first)) {
		t.Fatal("the config file holds the token")
	}
}

func TestLoginRefusesWhatIsNotAToken(t *testing.T) {
	config := isolate(t)
	for _, tc := range []struct {
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"", nil, 1, "pico: no token on stdin: pipe one in, or give --token\n"},
		{"\n", nil, 1, "pico: no token on stdin: pipe one in, or give --token\n"},
		{"c3Zj.c2VjcmV0\n", nil, 1, "pico: the token from stdin: malformed credential: a token's secret is 16 to 64 bytes\n"},
		{"not a token\n", nil, 1, "pico: the token from stdin: malformed credential: a token is BASE64URL(id).BASE64URL(secret)\n"},
		{"", []string{"--token", "x.y"}, 1, "pico: the token from --token: malformed credential: a token's parts are base64url without padding\n"},
	} {
		pico(t, tc.stdin, append([]string{"auth", "login"}, tc.args...)...).want(t, tc.code, "", tc.stderr)
	}
	if r := pico(t, wireToken("a", 1), "auth", "login", "--profile", "a b"); r.code != 2 || !strings.Contains(r.stderr, `profile name "a b"`) {
		t.Fatalf("a bad profile name: %+v", r)
	}
	if _, err := os.Stat(credentialsFor(config)); !os.IsNotExist(err) {
		t.Fatalf("a refused login wrote the file: %v", err)
	}
	for _, args := range [][]string{{"auth"}, {"auth", "frob"}, {"auth", "login", "extra"}, {"auth", "logout", "--token", wireToken("a", 1)},
		{"config", "set", "dev", "--token", wireToken("a", 1)}} {
		if r := pico(t, "", args...); r.code != 2 || !strings.Contains(r.stderr, "usage: pico ") {
			t.Fatalf("%q: %+v, want a usage error", args, r)
		}
	}
}

func TestAuthStatusAsksTheEndpoint(t *testing.T) {
	config := isolate(t)
	token := wireToken("svc/ingest", 4)
	g, url := gatedPico(t)
	g.set("Bearer "+token, 0)
	pico(t, token, "auth", "login").want(t, 0, "", "stored token svc/ingest for profile default in "+credentialsFor(config)+"\n")
	head := "profile   default\nendpoint  " + url + " (pico)\n"
	pico(t, "", "auth", "status", "--endpoint", url).want(t, 0,
		head+"token     svc/ingest (from "+credentialsFor(config)+")\nvalid     yes\n", "")
	if seen := g.seen(); seen[len(seen)-1] != "GET /?limit=1 Bearer "+token {
		t.Fatalf("status sent %q", seen[len(seen)-1])
	}
	revoked := wireToken("revoked", 5)
	pico(t, "", "auth", "status", "--endpoint", url, "--token", revoked).want(t, 1,
		head+"token     revoked (from --token)\n",
		"pico: token revoked is not valid at "+url+": unknown, revoked or expired (401)\n")
	g.set("", http.StatusForbidden)
	t.Setenv("PICO_TOKEN", revoked)
	pico(t, "", "auth", "status", "--endpoint", url).want(t, 0,
		head+"token     revoked (from PICO_TOKEN)\nvalid     yes, but it does not grant list (403)\n", "")
	t.Setenv("PICO_TOKEN", "")

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	r := pico(t, "", "auth", "status", "--endpoint", down.URL)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "pico: cannot reach "+down.URL+": connection refused") {
		t.Fatalf("an endpoint down: %+v", r)
	}
	pico(t, "", "auth", "logout")
	pico(t, "", "auth", "status", "--endpoint", url).want(t, 1, head,
		"pico: no token: give --token, set PICO_TOKEN or run pico auth login\n")
}

func TestAuthStatusWithDurableStreamsHeadsTheRoot(t *testing.T) {
	isolate(t)
	token := wireToken("svc/ingest", 4)
	g, url := gatedDS(t)
	g.set("Bearer "+token, 0)
	r := pico(t, "", "auth", "status", "--protocol", "ds", "--endpoint", url, "--token", token)
	if r.code != 0 || !strings.Contains(r.stdout, "endpoint  "+url+" (ds)\n") || !strings.Contains(r.stdout, "valid     yes (the endpoint answered 404)\n") {
		t.Fatalf("%+v", r)
	}
	if seen := g.seen(); len(seen) != 1 || seen[0] != "HEAD / Bearer "+token {
		t.Fatalf("status sent %q", seen)
	}
	if strings.Contains(r.stdout+r.stderr, secretOf(token)) {
		t.Fatalf("status shows the secret: %+v", r)
	}
	other := wireToken("other", 1)
	if r := pico(t, "", "auth", "status", "--protocol", "ds", "--endpoint", url, "--token", other); r.code != 1 ||
		r.stderr != "pico: token other is not valid at "+url+": unknown, revoked or expired (401)\n" {
		t.Fatalf("%+v", r)
	}
}

func TestLogoutRemovesTheProfilesToken(t *testing.T) {
	config := isolate(t)
	path := credentialsFor(config)
	pico(t, wireToken("a", 1), "auth", "login")
	pico(t, wireToken("b", 2), "auth", "login", "--profile", "other")
	pico(t, "", "auth", "logout").want(t, 0, "", "removed the token of profile default from "+path+"\n")
	pico(t, "", "auth", "logout").want(t, 0, "", "no token stored for profile default\n")
	var stored struct {
		Profiles map[string]struct{ Token string }
	}
	if _, err := toml.DecodeFile(path, &stored); err != nil || len(stored.Profiles) != 1 || stored.Profiles["other"].Token != wireToken("b", 2) {
		t.Fatalf("after logout the file holds %+v (%v)", stored, err)
	}
	t.Setenv("PICO_TOKEN", wireToken("c", 3))
	pico(t, "", "auth", "logout", "--profile", "other").want(t, 0, "",
		"removed the token of profile other from "+path+"\nnote: PICO_TOKEN is set, and the verbs send it instead\n")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the file outlived its last token: %v", err)
	}
}

func TestHelpNamesTheTokenAndTheAuthVerb(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"help"}, []string{"auth ", "--token TOKEN        PICO_TOKEN"}},
		{[]string{"auth", "-h"}, []string{"pico auth login", "--token (PICO_TOKEN)", "credentials.toml", "never its secret"}},
		{[]string{"head", "-h"}, []string{"--token (PICO_TOKEN)"}},
		{[]string{"admin", "-h"}, []string{"tokens issue ID", "--token (PICO_TOKEN)", "--prefix", "--auto-prefix"}},
	} {
		r := pico(t, "", tc.args...)
		for _, want := range tc.wants {
			if r.code != 0 || !strings.Contains(r.stdout, want) {
				t.Fatalf("%q: %+v, want %q in it", tc.args, r, want)
			}
		}
	}
}
