package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
)

// rootCred is the bootstrap token of the auth tests' nodes.
var rootCred = domain.Credential{ID: "root", Secret: []byte("e2e-root-secret-0123456789abcdef")}

var rootToken = domain.FormatToken(rootCred)

// bearer is the Authorization header of a wire token.
func bearer(token string, pairs ...string) http.Header {
	h := hdr(pairs...)
	h.Set("Authorization", "Bearer "+token)
	return h
}

// authNode is a node serving with --auth required, the Pico listener, a
// Durable Streams listener and the admin listener.
type authNode struct {
	*picoNode
	DS string // the Durable Streams listener's base URL
}

// authFlags serve with auth required, bootstrapped with the root token
// (unless extra names a --auth-bootstrap-token-file), and a Durable
// Streams listener.
func authFlags(extra ...string) []string {
	flags := []string{"--auth", "required", "--ds-listen", "127.0.0.1:0"}
	if !slices.Contains(extra, "--auth-bootstrap-token-file") {
		flags = append(flags, "--auth-bootstrap-token", rootToken)
	}
	return append(flags, extra...)
}

// startAuthNode starts a node with authFlags (cfg.flags after them).
func startAuthNode(t *testing.T, cfg nodeConfig) *authNode {
	t.Helper()
	if cfg.dataDir == "" {
		cfg.dataDir = t.TempDir()
	}
	cfg.flags = authFlags(cfg.flags...)
	n := &authNode{picoNode: startNode(t, cfg)}
	m := dsLine.FindStringSubmatch(n.Stdout.String())
	if m == nil {
		t.Fatalf("no Durable Streams listener in the banner:\n%s", n.Stdout)
	}
	n.DS = m[1]
	return n
}

// issueToken issues a token over the admin API with the by token and
// returns its wire form.
func issueToken(t *testing.T, adminURL, by, id, scope string) string {
	t.Helper()
	body := fmt.Sprintf(`{"id": %q, "scope": %s}`, id, scope)
	r := send(t, "POST", adminURL+"/admin/tokens", bearer(by, "Content-Type", "application/json"), []byte(body)).
		wantStatus(t, http.StatusCreated)
	var issued struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	// The anonymous record is never presented, so it comes with no token.
	anonymous := id == domain.AnonymousTokenID
	if err := json.Unmarshal(r.body, &issued); err != nil || issued.ID != id || (issued.Token == "") != anonymous {
		t.Fatalf("issue %s: %s (%v)", id, clipBody(r.body), err)
	}
	if cred, err := domain.ParseToken(issued.Token); !anonymous && (err != nil || cred.ID != id) {
		t.Fatalf("issue %s: the wire token %q does not parse to the id (%v)", id, issued.Token, err)
	}
	return issued.Token
}

// revokeToken deletes a token over the admin API with the root token.
func revokeToken(t *testing.T, adminURL, id string) {
	t.Helper()
	send(t, "DELETE", adminURL+"/admin/tokens/"+neturl.PathEscape(id), bearer(rootToken), nil).
		wantStatus(t, http.StatusNoContent)
}

// tokenIDs lists the token ids the root token sees.
func tokenIDs(t *testing.T, adminURL string) []string {
	t.Helper()
	r := send(t, "GET", adminURL+"/admin/tokens", bearer(rootToken), nil).wantStatus(t, http.StatusOK)
	var list struct {
		Tokens []struct {
			ID string `json:"id"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatalf("token list %s: %v", clipBody(r.body), err)
	}
	ids := make([]string, len(list.Tokens))
	for i, tok := range list.Tokens {
		ids[i] = tok.ID
	}
	return ids
}

// rootCreate creates a text/plain stream over the Pico listener with the
// root token, its records the bodies (at most one at creation, the rest
// appended).
func rootCreate(t *testing.T, picoURL, name string, bodies ...string) {
	t.Helper()
	var first []byte
	if len(bodies) > 0 {
		first = []byte(bodies[0])
	}
	send(t, "PUT", picoURL+name, bearer(rootToken, "Content-Type", "text/plain"), first).wantStatus(t, http.StatusCreated)
	for _, b := range bodies[min(1, len(bodies)):] {
		send(t, "POST", picoURL+name, bearer(rootToken, "Content-Type", "text/plain"), []byte(b)).wantStatus(t, http.StatusOK)
	}
}

// scopeJSON writes a scope: stream matchers (a trailing "*" makes a
// prefix), groups as "stream.read"-style names, audiences, and more keys
// (`"autoPrefixStreams": true`) as given.
func scopeJSON(streams []string, groups []string, audiences []string, more ...string) string {
	matchers := func(values []string) string {
		var out []string
		for _, v := range values {
			if p, ok := strings.CutSuffix(v, "*"); ok {
				out = append(out, fmt.Sprintf(`{"prefix": %q}`, p))
			} else {
				out = append(out, fmt.Sprintf(`{"exact": %q}`, v))
			}
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	g := map[string]map[string]bool{}
	for _, name := range groups {
		kind, rw, _ := strings.Cut(name, ".")
		if g[kind] == nil {
			g[kind] = map[string]bool{}
		}
		g[kind][rw] = true
	}
	gb, _ := json.Marshal(g)
	ab, _ := json.Marshal(audiences)
	fields := []string{`"streams": ` + matchers(streams), `"groups": ` + string(gb), `"audiences": ` + string(ab)}
	return "{" + strings.Join(append(fields, more...), ", ") + "}"
}

// allGroups and allAudiences name every group and audience.
var (
	allGroups    = []string{"stream.read", "stream.write", "tokens.read", "tokens.write", "admin.read", "admin.write"}
	allAudiences = []string{"pico", "durable_streams", "admin"}
)

// except returns names without drop.
func except(names []string, drop string) []string {
	var out []string
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

// pollUntil polls a request until it answers want, for up to within,
// and returns how long that took.
func pollUntil(t *testing.T, method, url string, h http.Header, want int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		r := send(t, method, url, h, nil)
		if r.status == want {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("%s: still %d after %v, want %d; body %s", r.what, r.status, within, want, clipBody(r.body))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
