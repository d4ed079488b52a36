package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/adminclient"
	"github.com/picomq/pico/domain"
)

// fakeTokens is an admin listener's token endpoints. It records every
// request and, when want is set, answers 401 to any other Authorization.
type fakeTokens struct {
	mu       sync.Mutex
	want     string
	requests []tokenRequest
	tokens   []adminclient.Token
}

type tokenRequest struct{ method, uri, authorization, contentType, body string }

func newFakeTokens(t *testing.T) (*fakeTokens, string) {
	f := &fakeTokens{tokens: []adminclient.Token{
		{ID: "root", Scope: scopeJSON(t, domain.RootScope()), CreatedAtMs: 1},
		{ID: "ro", Issuer: "root", CreatedAtMs: 2, Scope: scopeJSON(t, domain.Scope{
			Streams: domain.Matchers{{Value: "/a"}, {Value: "/b"}}, Groups: 1 << domain.GroupStreamRead,
			Audiences: 1 << domain.AudiencePico, Expires: true, ExpiresAtMs: 4_102_444_800_000})},
		{ID: "svc/ingest", Issuer: "root", CreatedAtMs: 3, Scope: scopeJSON(t, domain.Scope{
			Streams: domain.Matchers{{Value: "/logs/", Prefix: true}}, Groups: 1 << domain.GroupStreamWrite,
			Ops: 1<<domain.OpHead | 1<<domain.OpAppend, AutoPrefixStreams: true,
			Audiences: 1<<domain.AudiencePico | 1<<domain.AudienceDurableStreams, Expires: true, ExpiresAtMs: 1_000_000_000_000})},
		{ID: "future", Issuer: "root", CreatedAtMs: 4, Scope: json.RawMessage(`{"ops":["teleport"]}`)},
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func scopeJSON(t *testing.T, s domain.Scope) json.RawMessage {
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakeTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	req := tokenRequest{r.Method, r.RequestURI, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)}
	f.requests = append(f.requests, req)
	switch {
	case f.want != "" && req.authorization != f.want:
		adminError(w, http.StatusUnauthorized, "no valid credential")
	case r.Method == http.MethodGet && r.RequestURI == "/admin/tokens":
		json.NewEncoder(w).Encode(adminclient.Tokens{Tokens: f.tokens})
	case r.Method == http.MethodPost && r.RequestURI == "/admin/tokens":
		f.issue(w, req.body)
	case r.Method == http.MethodDelete && r.RequestURI == "/admin/tokens/svc%2Fingest":
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodDelete:
		adminError(w, http.StatusNotFound, "no such token")
	default:
		adminError(w, http.StatusBadRequest, "unexpected "+r.Method+" "+r.RequestURI)
	}
}

func (f *fakeTokens) issue(w http.ResponseWriter, body string) {
	var in struct {
		ID    string          `json:"id"`
		Scope json.RawMessage `json:"scope"`
	}
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		adminError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch in.ID {
	case "taken":
		adminError(w, http.StatusConflict, "token id taken is taken")
		return
	case "wide":
		adminError(w, http.StatusForbidden, "its stream matchers reach beyond the issuer's")
		return
	}
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(adminclient.IssuedToken{
		Token: adminclient.Token{ID: in.ID, Scope: in.Scope, Issuer: "root", CreatedAtMs: 9}, Wire: wireToken(in.ID, 8)})
}

func adminError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q}`, msg)
}

func (f *fakeTokens) seen() []tokenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tokenRequest(nil), f.requests...)
}

func (f *fakeTokens) last(t *testing.T) tokenRequest {
	t.Helper()
	seen := f.seen()
	if len(seen) == 0 {
		t.Fatal("the listener saw no request")
	}
	return seen[len(seen)-1]
}

// sentScope is the scope of the last issue request.
func (f *fakeTokens) sentScope(t *testing.T) (string, domain.Scope) {
	t.Helper()
	var in struct {
		ID    string          `json:"id"`
		Scope json.RawMessage `json:"scope"`
	}
	body := f.last(t).body
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	s, err := domain.ParseScope(in.Scope)
	if err != nil {
		t.Fatalf("scope %s: %v", in.Scope, err)
	}
	return in.ID, s
}

func TestAdminTokensLsPrintsATable(t *testing.T) {
	isolate(t)
	f, url := newFakeTokens(t)
	root := wireToken("root", 1)
	pico(t, "", "admin", "tokens", "ls", "--admin-endpoint", url, "--token", root).want(t, 0,
		"ID          ISSUER  AUDIENCES                   OPERATIONS                                                                STREAMS                EXPIRES\n"+
			"root        -       pico,durable_streams,admin  stream:read,stream:write,tokens:read,tokens:write,admin:read,admin:write  *                      never\n"+
			"ro          root    pico                        stream:read                                                               /a,/b                  2100-01-01T00:00:00Z\n"+
			"svc/ingest  root    pico,durable_streams        stream:write,head                                                         /logs/* (auto-prefix)  2001-09-09T01:46:40Z (expired)\n"+
			"future      root    ?                           ?                                                                         ?                      ?\n",
		"pico: token future: cannot read its scope (unknown operation \"teleport\"); --json shows it\n")
	if got := f.last(t); got.method != http.MethodGet || got.uri != "/admin/tokens" || got.authorization != "Bearer "+root {
		t.Fatalf("the listener saw %+v", got)
	}
	r := pico(t, "", "admin", "tokens", "ls", "--json", "--admin-endpoint", url, "--token", root)
	var listed adminclient.Tokens
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || r.code != 0 || len(listed.Tokens) != 4 {
		t.Fatalf("ls --json: %+v (%v)", r, err)
	}
	for i, tok := range listed.Tokens {
		var scope bytes.Buffer
		json.Compact(&scope, tok.Scope)
		if want := f.tokens[i]; tok.ID != want.ID || tok.Issuer != want.Issuer || tok.CreatedAtMs != want.CreatedAtMs || scope.String() != string(want.Scope) {
			t.Fatalf("token %d: %s %q %s, want %s %q %s", i, tok.ID, tok.Issuer, scope.String(), want.ID, want.Issuer, want.Scope)
		}
	}
}

func TestAdminTokensIssueBuildsTheScopeAndPrintsTheTokenAlone(t *testing.T) {
	isolate(t)
	f, url := newFakeTokens(t)
	root := wireToken("root", 1)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	t.Setenv("PICO_TOKEN", root)
	before := time.Now()
	r := pico(t, "", "admin", "tokens", "issue", "svc/ingest", "--prefix", "/logs/", "--write", "--expires", "24h")
	after := time.Now()
	if r.code != 0 || r.stdout != wireToken("svc/ingest", 8)+"\n" {
		t.Fatalf("issue: %+v, want the token alone on stdout", r)
	}
	if !strings.HasPrefix(r.stderr, "issued token svc/ingest, shown this once: audiences pico,durable_streams; operations stream:write; streams /logs/*; expires 20") {
		t.Fatalf("issue's stderr %q", r.stderr)
	}
	req := f.last(t)
	if req.method != http.MethodPost || req.uri != "/admin/tokens" || req.authorization != "Bearer "+root || req.contentType != "application/json" {
		t.Fatalf("the listener saw %+v", req)
	}
	id, s := f.sentScope(t)
	if id != "svc/ingest" || len(s.Streams) != 1 || s.Streams[0] != (domain.Matcher{Value: "/logs/", Prefix: true}) ||
		s.Groups != 1<<domain.GroupStreamWrite || s.Ops != 0 || s.Audiences != 1<<domain.AudiencePico|1<<domain.AudienceDurableStreams ||
		s.AutoPrefixStreams || len(s.Tokens) != 0 || !s.Expires ||
		s.ExpiresAtMs < before.Add(24*time.Hour).UnixMilli() || s.ExpiresAtMs > after.Add(24*time.Hour).UnixMilli() {
		t.Fatalf("sent %q %+v", id, s)
	}

	r = pico(t, "", "admin", "tokens", "issue", "reader", "--exact", "/a", "--exact", "/b", "--read",
		"--ops", "append,trim", "--ops", "close", "--audience", "admin,pico")
	if r.code != 0 || r.stdout != wireToken("reader", 8)+"\n" {
		t.Fatalf("issue reader: %+v", r)
	}
	if _, s := f.sentScope(t); len(s.Streams) != 2 || s.Streams[0] != (domain.Matcher{Value: "/a"}) || s.Streams[1] != (domain.Matcher{Value: "/b"}) ||
		s.Groups != 1<<domain.GroupStreamRead || s.Ops != 1<<domain.OpAppend|1<<domain.OpTrim|1<<domain.OpClose ||
		s.Audiences != 1<<domain.AudienceAdmin|1<<domain.AudiencePico || s.Expires {
		t.Fatalf("sent %+v", s)
	}

	pico(t, "", "admin", "tokens", "issue", "tenant", "--prefix", "/t/1/", "--read", "--write", "--auto-prefix").want(t, 0,
		wireToken("tenant", 8)+"\n",
		"issued token tenant, shown this once: audiences pico,durable_streams; operations stream:read,stream:write; streams /t/1/* (auto-prefix); expires never\n")
	if _, s := f.sentScope(t); !s.AutoPrefixStreams || s.Groups != 1<<domain.GroupStreamRead|1<<domain.GroupStreamWrite {
		t.Fatalf("sent %+v", s)
	}
}

func TestAdminTokensIssueTakesAScopesJSON(t *testing.T) {
	isolate(t)
	f, url := newFakeTokens(t)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	want := domain.Scope{Streams: domain.Matchers{{Value: "/x/", Prefix: true}}, Tokens: domain.Matchers{{Value: "svc/", Prefix: true}},
		Groups: 1 << domain.GroupTokensWrite, Ops: 1 << domain.OpListTokens, Audiences: 1 << domain.AudienceAdmin}
	text := string(scopeJSON(t, want))
	file := filepath.Join(t.TempDir(), "scope.json")
	os.WriteFile(file, []byte(text), 0o600)
	for _, scope := range []string{text, "@" + file} {
		r := pico(t, "", "admin", "tokens", "issue", "issuer", "--scope", scope, "--json")
		var issued adminclient.IssuedToken
		if err := json.Unmarshal([]byte(r.stdout), &issued); err != nil || r.code != 0 || issued.Wire != wireToken("issuer", 8) || issued.ID != "issuer" {
			t.Fatalf("--scope %.20s --json: %+v (%v)", scope, r, err)
		}
		if _, s := f.sentScope(t); string(scopeJSON(t, s)) != text {
			t.Fatalf("sent %s, want %s", scopeJSON(t, s), text)
		}
	}
}

func TestAdminTokensIssueRefusesBadScopesBeforeAnyRequest(t *testing.T) {
	isolate(t)
	f, url := newFakeTokens(t)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"tokens", "issue", "a"}, "tokens issue needs a scope"},
		{[]string{"tokens", "issue", "a", "--scope", `{}`, "--read"}, "--scope and --read exclude each other"},
		{[]string{"tokens", "issue", "a", "--scope", `{"streams":[],"extra":1}`}, "unknown field"},
		{[]string{"tokens", "issue", "a", "--scope", `{"groups":{"stream":{"read":true}}}`}, "the scope names no audience"},
		{[]string{"tokens", "issue", "a", "--read"}, "the token would reach no stream"},
		{[]string{"tokens", "issue", "a", "--prefix", "/p/"}, "the scope grants no operation"},
		{[]string{"tokens", "issue", "a", "--prefix", "/p/", "--ops", "read,fly"}, `unknown operation "fly"`},
		{[]string{"tokens", "issue", "a", "--prefix", "/p/", "--read", "--audience", "mqtt"}, `unknown audience "mqtt"`},
		{[]string{"tokens", "issue", "a", "--exact", "/p", "--read", "--auto-prefix"}, "autoPrefixStreams needs exactly one stream matcher"},
		{[]string{"tokens", "issue", "a", "--prefix", "/p/", "--read", "--expires", "-1h"}, "--expires must be above 0"},
		{[]string{"tokens", "issue", "a b", "--prefix", "/p/", "--read"}, "token id"},
		{[]string{"tokens", "ls", "--prefix", "/p/"}, "--prefix goes with tokens issue"},
		{[]string{"nodes", "--scope", "{}"}, "--scope goes with tokens issue"},
		{[]string{"tokens"}, "want ls, issue ID or revoke ID"},
		{[]string{"tokens", "frob"}, `unknown admin command "tokens frob"`},
		{[]string{"tokens", "revoke"}, "wrong number of arguments"},
		{[]string{"tokens", "ls", "extra"}, "wrong number of arguments"},
	} {
		r := pico(t, "", append([]string{"admin"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.says) || !strings.Contains(r.stderr, "usage: pico admin") || r.stdout != "" {
			t.Fatalf("%q: %+v, want a usage error saying %q", tc.args, r, tc.says)
		}
	}
	if seen := f.seen(); len(seen) != 0 {
		t.Fatalf("the listener saw %+v", seen)
	}
}

func TestAdminTokensIssueReportsTheListenersRefusal(t *testing.T) {
	isolate(t)
	_, url := newFakeTokens(t)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	pico(t, "", "admin", "tokens", "issue", "taken", "--prefix", "/p/", "--read").want(t, 4, "", "pico: 409 Conflict: token id taken is taken\n")
	pico(t, "", "admin", "tokens", "issue", "wide", "--prefix", "", "--read").want(t, 5, "",
		"pico: 403 Forbidden: its stream matchers reach beyond the issuer's\n")
}

func TestAdminTokensRevokeDeletesTheEscapedID(t *testing.T) {
	isolate(t)
	f, url := newFakeTokens(t)
	root := wireToken("root", 1)
	pico(t, "", "admin", "tokens", "revoke", "svc/ingest", "--admin-endpoint", url, "--token", root).want(t, 0, "", "revoked token svc/ingest\n")
	if got := f.last(t); got.method != http.MethodDelete || got.uri != "/admin/tokens/svc%2Fingest" || got.authorization != "Bearer "+root || got.body != "" {
		t.Fatalf("the listener saw %+v", got)
	}
	pico(t, "", "admin", "tokens", "revoke", "nope", "--admin-endpoint", url, "--token", root).want(t, 3, "", "pico: 404 Not Found: no such token\n")
}

func TestAdminSendsTheFlagThenPICO_TOKENThenTheStoredToken(t *testing.T) {
	isolate(t)
	f, url := newFakeTokens(t)
	t.Setenv("PICO_ADMIN_ENDPOINT", url)
	flagToken, envToken, storedToken := wireToken("flag", 1), wireToken("env", 2), wireToken("stored", 3)
	f.want = "Bearer " + storedToken
	pico(t, "", "admin", "tokens", "revoke", "svc/ingest").want(t, 5, "",
		"pico: 401 Unauthorized: no valid credential\n"+
			"pico: the server wants a valid token: --token, PICO_TOKEN or pico auth login (pico auth status checks one)\n")
	if got := f.last(t).authorization; got != "" {
		t.Fatalf("with no token the listener saw %q", got)
	}
	pico(t, storedToken, "auth", "login")
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, storedToken},
		{envToken, nil, envToken},
		{envToken, []string{"--token", flagToken}, flagToken},
	} {
		t.Setenv("PICO_TOKEN", tc.env)
		pico(t, "", append([]string{"admin", "tokens", "revoke", "svc/ingest"}, tc.args...)...)
		if got := f.last(t).authorization; got != "Bearer "+tc.want {
			t.Fatalf("PICO_TOKEN=%q %q: the listener saw %q", tc.env, tc.args, got)
		}
	}
}
