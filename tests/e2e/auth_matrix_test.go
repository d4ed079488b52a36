package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
)

// matrixCred is one column of the matrix: who asks.
type matrixCred int

const (
	credNone        matrixCred = iota // no Authorization, and no anonymous record yet
	credMalformed                     // Authorization that is no bearer token
	credWrongSecret                   // the root token's id with another secret
	credExpired                       // a token past its expiresAtMs
	credRevoked                       // a token issued, then revoked
	credRoot                          // the bootstrap token
	credLackingOp                     // every group but the route's operation's
	credLackingAud                    // every audience but the listener's
	credOutside                       // every operation, streams under /other/ only, token ids other-*
	credAnonymous                     // no Authorization, with the anonymous record: read under /public/
	numCredentials
)

var credentialNames = [numCredentials]string{"no-token", "malformed", "wrong-secret", "expired", "revoked", "root",
	"lacking-the-operation", "lacking-the-audience", "outside-the-stream-matchers", "anonymous"}

// listener names, as the samples and the audiences spell them.
const (
	lnPico  = "pico"
	lnDS    = "durable_streams"
	lnAdmin = "admin"
)

// matrixCell is what one request of the matrix names: its stream (under
// /m/, or /public/ for the anonymous column) and a token id, both its own.
type matrixCell struct {
	stream, id string
}

// matrixSample is one route of a listener as the matrix sends it.
type matrixSample struct {
	listener, name string
	public         bool
	op             domain.Op
	// named: the request names its resource (a stream, a token id), so the
	// scope's matchers decide it; unnamed requests (listings) are filtered.
	named bool
	// held: an answer that stays open (SSE): only its head is read.
	held bool
	req  func(c matrixCell) (method, target string, h http.Header, body []byte)
	// prepare makes, with the root token, what an allowed request needs.
	prepare func(t *testing.T, n *authNode, c matrixCell)
	ok      []int // what an allowed request answers
	// verify checks an allowed answer further.
	verify func(t *testing.T, cred matrixCred, r reply)
}

func getTarget(target string) func(matrixCell) (string, string, http.Header, []byte) {
	return func(matrixCell) (string, string, http.Header, []byte) { return "GET", target, nil, nil }
}

func onStream(method, query string, h http.Header, body string) func(matrixCell) (string, string, http.Header, []byte) {
	return func(c matrixCell) (string, string, http.Header, []byte) {
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		return method, c.stream + query, h.Clone(), b
	}
}

// withCellStream creates the matrixCell's stream with one record.
func withCellStream(t *testing.T, n *authNode, c matrixCell) { rootCreate(t, n.URL, c.stream, "r0") }

// listedUnder checks that a Pico listing shows only names under prefix.
func listedUnder(prefix string) func(t *testing.T, cred matrixCred, r reply) {
	return func(t *testing.T, cred matrixCred, r reply) {
		if r.what[:4] == "HEAD" || cred == credRoot {
			return
		}
		var page struct {
			Streams []struct {
				Name string `json:"name"`
			} `json:"streams"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatalf("%s: listing %s: %v", r.what, clipBody(r.body), err)
		}
		for _, s := range page.Streams {
			if cred == credAnonymous && !strings.HasPrefix(s.Name, "/public/") || cred == credOutside && !strings.HasPrefix(s.Name, prefix) {
				t.Errorf("%s: the listing shows %s, outside the scope", r.what, s.Name)
			}
		}
	}
}

// matrixSamples are the routes of the three listeners, each with a request
// whose answer tells allowed from refused. Every operation of domain.Ops
// must appear (TestAuthMatrix checks), and the listener packages' route
// tests list the same routes.
func matrixSamples() []matrixSample {
	text := hdr("Content-Type", "text/plain")
	preflight := func(method string) http.Header {
		return hdr("Origin", "http://app.example", "Access-Control-Request-Method", method,
			"Access-Control-Request-Headers", "authorization")
	}
	return []matrixSample{
		// Pico
		{listener: lnPico, name: "list", op: domain.OpList, req: getTarget("/?limit=100"), ok: []int{200}, verify: listedUnder("/other/")},
		{listener: lnPico, name: "list-head", op: domain.OpList, req: func(matrixCell) (string, string, http.Header, []byte) { return "HEAD", "/", nil, nil }, ok: []int{200}},
		{listener: lnPico, name: "read", op: domain.OpRead, named: true, req: onStream("GET", "?seq=0&format=json", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnPico, name: "live-read-long-poll", op: domain.OpRead, named: true, req: onStream("GET", "?seq=0&live=long-poll", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnPico, name: "live-read-sse", op: domain.OpRead, named: true, held: true, req: onStream("GET", "?seq=0&live=sse", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnPico, name: "head", op: domain.OpHead, named: true, req: onStream("HEAD", "", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnPico, name: "create", op: domain.OpCreate, named: true, req: onStream("PUT", "", text, ""), ok: []int{201}},
		{listener: lnPico, name: "append", op: domain.OpAppend, named: true, req: onStream("POST", "", text, "x"), prepare: withCellStream, ok: []int{200}},
		{listener: lnPico, name: "trim", op: domain.OpTrim, named: true, req: onStream("POST", "", hdr("Pico-Trim-Seq", "1"), ""), prepare: withCellStream, ok: []int{200, 204}},
		{listener: lnPico, name: "close", op: domain.OpClose, named: true, req: onStream("POST", "", hdr("Pico-Closed", "true"), ""), prepare: withCellStream, ok: []int{200, 204}},
		{listener: lnPico, name: "delete", op: domain.OpDelete, named: true, req: onStream("DELETE", "", nil, ""), prepare: withCellStream, ok: []int{200, 204}},
		{listener: lnPico, name: "preflight", public: true, req: onStream("OPTIONS", "", preflight("PUT"), ""), ok: []int{204}},
		// A join reads every stream it subscribes to; a listing of groups
		// inspects.
		{listener: lnPico, name: "group-join", op: domain.OpRead, named: true, req: func(c matrixCell) (string, string, http.Header, []byte) {
			return "POST", "/_groups/" + c.id + "/members", nil, fmt.Appendf(nil, `{"subscription":[%q],"sessionTimeoutMs":1000}`, c.stream)
		}, ok: []int{200}},
		{listener: lnPico, name: "groups-list", op: domain.OpStreamInspect, req: getTarget("/_groups"), ok: []int{200}},

		// Durable Streams
		{listener: lnDS, name: "read", op: domain.OpRead, named: true, req: onStream("GET", "?offset=-1", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnDS, name: "live-read-long-poll", op: domain.OpRead, named: true, req: onStream("GET", "?offset=-1&live=long-poll", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnDS, name: "live-read-sse", op: domain.OpRead, named: true, held: true, req: onStream("GET", "?offset=-1&live=sse", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnDS, name: "head", op: domain.OpHead, named: true, req: onStream("HEAD", "", nil, ""), prepare: withCellStream, ok: []int{200}},
		{listener: lnDS, name: "create", op: domain.OpCreate, named: true, req: onStream("PUT", "", text, ""), ok: []int{201}},
		{listener: lnDS, name: "append", op: domain.OpAppend, named: true, req: onStream("POST", "", text, "x"), prepare: withCellStream, ok: []int{204}},
		{listener: lnDS, name: "close", op: domain.OpClose, named: true, req: onStream("POST", "", hdr("Stream-Closed", "true"), ""), prepare: withCellStream, ok: []int{204}},
		{listener: lnDS, name: "delete", op: domain.OpDelete, named: true, req: onStream("DELETE", "", nil, ""), prepare: withCellStream, ok: []int{204}},
		{listener: lnDS, name: "subscription", op: domain.OpRead, named: true, req: onStream("GET", "/__ds/subscriptions/s1", nil, ""), ok: []int{404}},
		{listener: lnDS, name: "signing-keys", public: true, req: onStream("GET", "/__ds/jwks.json", nil, ""), ok: []int{200}},
		{listener: lnDS, name: "preflight", public: true, req: onStream("OPTIONS", "", preflight("POST"), ""), ok: []int{204}},

		// admin
		{listener: lnAdmin, name: "cluster", op: domain.OpClusterRead, req: getTarget("/admin/cluster"), ok: []int{200}},
		{listener: lnAdmin, name: "nodes", op: domain.OpNodeRead, req: getTarget("/admin/nodes"), ok: []int{200}},
		{listener: lnAdmin, name: "set-slots", op: domain.OpUpdateNodeSlots, req: func(matrixCell) (string, string, http.Header, []byte) {
			return "POST", "/admin/nodes/1", hdr("Content-Type", "application/json"), []byte(`{"slots": 1}`)
		}, ok: []int{200}},
		// A drain of a node nobody registered: allowed, it finds no node
		// (a drain of this lone node would take its slots away).
		{listener: lnAdmin, name: "drain", op: domain.OpDrainNode, req: func(matrixCell) (string, string, http.Header, []byte) {
			return "POST", "/admin/nodes/99/drain", nil, nil
		}, ok: []int{404}},
		{listener: lnAdmin, name: "drain-progress", op: domain.OpNodeRead, req: getTarget("/admin/nodes/1/drain"), ok: []int{200}},
		{listener: lnAdmin, name: "stream", op: domain.OpStreamInspect, req: func(c matrixCell) (string, string, http.Header, []byte) {
			return "GET", "/admin/streams" + c.stream, nil, nil
		}, prepare: withCellStream, ok: []int{200}},
		{listener: lnAdmin, name: "transfer", op: domain.OpTransferStream, req: func(c matrixCell) (string, string, http.Header, []byte) {
			return "POST", "/admin/transfer", hdr("Content-Type", "application/json"), fmt.Appendf(nil, `{"stream": %q, "toNode": 1}`, c.stream)
		}, prepare: withCellStream, ok: []int{200}},
		{listener: lnAdmin, name: "metrics", op: domain.OpClusterRead, req: getTarget("/metrics"), ok: []int{200}},
		{listener: lnAdmin, name: "tokens-list", op: domain.OpListTokens, req: getTarget("/admin/tokens"), ok: []int{200}},
		{listener: lnAdmin, name: "tokens-issue", op: domain.OpIssueToken, named: true, req: func(c matrixCell) (string, string, http.Header, []byte) {
			return "POST", "/admin/tokens", hdr("Content-Type", "application/json"),
				fmt.Appendf(nil, `{"id": %q, "scope": %s}`, c.id, scopeJSON([]string{"/m/*"}, []string{"stream.read"}, []string{"pico"}))
		}, ok: []int{201}},
		{listener: lnAdmin, name: "tokens-revoke", op: domain.OpRevokeToken, named: true, req: func(c matrixCell) (string, string, http.Header, []byte) {
			return "DELETE", "/admin/tokens/" + c.id, nil, nil
		}, prepare: func(t *testing.T, n *authNode, c matrixCell) {
			issueToken(t, n.AdminURL, rootToken, c.id, scopeJSON([]string{"/m/*"}, []string{"stream.read"}, []string{"pico"}))
		}, ok: []int{204}},
		{listener: lnAdmin, name: "health", public: true, req: getTarget("/health"), ok: []int{200}},
		{listener: lnAdmin, name: "ready", public: true, req: getTarget("/ready"), ok: []int{200}},
		{listener: lnAdmin, name: "dashboard", public: true, req: getTarget("/"), ok: []int{200}},
		{listener: lnAdmin, name: "dashboard-js", public: true, req: getTarget("/dashboard.js"), ok: []int{200}},
		{listener: lnAdmin, name: "dashboard-css", public: true, req: getTarget("/dashboard.css"), ok: []int{200}},
		{listener: lnAdmin, name: "openapi", public: true, req: getTarget("/openapi.yaml"), ok: []int{200}},
		{listener: lnAdmin, name: "options", public: true, req: func(matrixCell) (string, string, http.Header, []byte) { return "OPTIONS", "/admin/cluster", nil, nil }, ok: []int{204}},
	}
}

// allowed reports whether cred may make the matrixSample's request; refused
// requests answer want (401 or 403).
func (s matrixSample) allowed(cred matrixCred) (ok bool, want int) {
	switch {
	case s.public:
		return true, 0
	case cred <= credRevoked:
		return false, http.StatusUnauthorized
	case cred == credRoot:
		return true, 0
	case cred == credLackingOp, cred == credLackingAud:
		return false, http.StatusForbidden
	case cred == credOutside:
		// Admin operations name no stream, and listings are filtered.
		if s.named {
			return false, http.StatusForbidden
		}
		return true, 0
	case cred == credAnonymous:
		// Without a matrixCred every refusal is a 401: the fix is one.
		if s.listener != lnAdmin && s.op.Group() == domain.GroupStreamRead {
			return true, 0
		}
		return false, http.StatusUnauthorized
	}
	panic("unknown matrixCred")
}

// TestAuthMatrix sends every route of the three listeners with every kind
// of matrixCred: refused ones answer 401 or 403 in the listener's error
// format, before anything is done; allowed ones answer as without auth.
func TestAuthMatrix(t *testing.T) {
	n := startAuthNode(t, nodeConfig{})
	samples := matrixSamples()
	for _, op := range domain.Ops() {
		if !slices.ContainsFunc(samples, func(s matrixSample) bool { return !s.public && s.op == op }) {
			t.Errorf("operation %s has no matrixSample in the matrix: add the routes that are it", op)
		}
	}

	// The expiring token first, so its expiry passes while the rest are
	// issued.
	everything := scopeJSON([]string{"*"}, allGroups, allAudiences, `"tokens": [{"prefix": ""}]`)
	expiresAt := time.Now().Add(1500 * time.Millisecond)
	tokens := map[matrixCred]string{credRoot: rootToken, credMalformed: "not-a-token",
		credWrongSecret: domain.FormatToken(domain.Credential{ID: rootCred.ID, Secret: []byte("not-the-root-secret-0123456789ab")})}
	tokens[credExpired] = issueToken(t, n.AdminURL, rootToken, "expiring",
		scopeJSON([]string{"*"}, allGroups, allAudiences, `"tokens": [{"prefix": ""}]`, fmt.Sprintf(`"expiresAtMs": %d`, expiresAt.UnixMilli())))
	send(t, "GET", n.AdminURL+"/admin/cluster", bearer(tokens[credExpired]), nil).wantStatus(t, http.StatusOK)
	tokens[credRevoked] = issueToken(t, n.AdminURL, rootToken, "revoked", everything)
	send(t, "GET", n.AdminURL+"/admin/cluster", bearer(tokens[credRevoked]), nil).wantStatus(t, http.StatusOK)
	revokeToken(t, n.AdminURL, "revoked")
	tokens[credOutside] = issueToken(t, n.AdminURL, rootToken, "outside",
		scopeJSON([]string{"/other/*"}, allGroups, allAudiences, `"tokens": [{"prefix": "other-"}]`))
	lackingOp := map[domain.Group]string{}
	for g, name := range allGroups {
		lackingOp[domain.Group(g)] = issueToken(t, n.AdminURL, rootToken, "lacking-"+name,
			scopeJSON([]string{"*"}, except(allGroups, name), allAudiences, `"tokens": [{"prefix": ""}]`))
	}
	lackingAud := map[string]string{}
	for _, aud := range allAudiences {
		lackingAud[aud] = issueToken(t, n.AdminURL, rootToken, "no-"+aud,
			scopeJSON([]string{"*"}, allGroups, except(allAudiences, aud), `"tokens": [{"prefix": ""}]`))
	}
	base := map[string]string{lnPico: n.URL, lnDS: n.DS, lnAdmin: n.AdminURL}
	tokenOf := func(s matrixSample, cred matrixCred) string {
		switch cred {
		case credNone, credAnonymous:
			return ""
		case credLackingOp:
			return lackingOp[s.op.Group()]
		case credLackingAud:
			return lackingAud[s.listener]
		}
		return tokens[cred]
	}

	var refusedCreates, refusedIssues []string
	run := func(cred matrixCred) {
		t.Run(credentialNames[cred], func(t *testing.T) {
			for _, s := range samples {
				t.Run(s.listener+"/"+s.name, func(t *testing.T) {
					slug := s.listener + "-" + s.name + "-" + credentialNames[cred]
					c := matrixCell{stream: "/m/" + slug, id: "matrixCell-" + slug}
					if cred == credAnonymous {
						c.stream = "/public/" + slug
					}
					ok, want := s.allowed(cred)
					if ok && s.prepare != nil {
						s.prepare(t, n, c)
					}
					method, target, h, body := s.req(c)
					if h == nil {
						h = http.Header{}
					}
					token := tokenOf(s, cred)
					if token != "" {
						h.Set("Authorization", "Bearer "+token)
					}
					r := matrixRequest(t, method, base[s.listener]+target, h, body, s.held)
					switch {
					case ok && !slices.Contains(s.ok, r.status):
						t.Fatalf("%s: %d, want one of %v (allowed); body %s", r.what, r.status, s.ok, clipBody(r.body))
					case ok:
						if s.verify != nil {
							s.verify(t, cred, r)
						}
					default:
						wantRefusal(t, r, s.listener, want, token)
						if s.name == "create" {
							refusedCreates = append(refusedCreates, c.stream)
						}
						if s.name == "tokens-issue" {
							refusedIssues = append(refusedIssues, c.id)
						}
					}
				})
			}
		})
	}
	if wait := time.Until(expiresAt); wait > 0 {
		time.Sleep(wait + 50*time.Millisecond)
	}
	for cred := range credAnonymous {
		run(cred)
	}
	issueToken(t, n.AdminURL, rootToken, domain.AnonymousTokenID,
		scopeJSON([]string{"/public/*"}, []string{"stream.read"}, []string{"pico", "durable_streams"}))
	run(credAnonymous)

	t.Run("refused-requests-did-nothing", func(t *testing.T) {
		for _, name := range refusedCreates {
			send(t, "HEAD", n.URL+name, bearer(rootToken), nil).wantStatus(t, http.StatusNotFound)
		}
		ids := tokenIDs(t, n.AdminURL)
		for _, id := range refusedIssues {
			if slices.Contains(ids, id) {
				t.Errorf("refused issue of %s stored it", id)
			}
		}
		if len(refusedCreates) == 0 || len(refusedIssues) == 0 {
			t.Errorf("no refused creates (%d) or issues (%d) checked", len(refusedCreates), len(refusedIssues))
		}
	})

	t.Run("matrixCred-forms", func(t *testing.T) {
		unknown := domain.FormatToken(domain.Credential{ID: "nobody", Secret: rootCred.Secret})
		anonymous := domain.FormatToken(domain.Credential{ID: domain.AnonymousTokenID, Secret: rootCred.Secret})
		for name, value := range map[string]string{
			"basic-scheme":      "Basic cm9vdDpzZWNyZXQ=",
			"bearer-alone":      "Bearer",
			"bearer-empty":      "Bearer ",
			"no-scheme":         rootToken,
			"no-dot":            "Bearer " + strings.ReplaceAll(rootToken, ".", ""),
			"padded":            "Bearer " + rootToken + "==",
			"short-secret":      "Bearer " + domain.FormatToken(domain.Credential{ID: "root", Secret: []byte("short")}),
			"unknown-id":        "Bearer " + unknown,
			"anonymous-as-id":   "Bearer " + anonymous,
			"over-long":         "Bearer " + rootToken + strings.Repeat("A", domain.MaxAuthorization),
			"lower-case-scheme": "bearer " + rootToken, // the scheme is case-insensitive: allowed
		} {
			for ln, target := range map[string]string{lnPico: n.URL + "/m/forms", lnDS: n.DS + "/m/forms", lnAdmin: n.AdminURL + "/admin/cluster"} {
				r := send(t, "GET", target, hdr("Authorization", value), nil)
				if name == "lower-case-scheme" {
					if r.status == 401 || r.status == 403 {
						t.Errorf("%s with %s: %d, want the lower-case scheme accepted", ln, name, r.status)
					}
					continue
				}
				wantRefusal(t, r, ln, http.StatusUnauthorized, rootToken)
			}
		}
	})
}

// matrixRequest sends one request; a held answer that is not a refusal
// is closed after its head.
func matrixRequest(t *testing.T, method, url string, h http.Header, body []byte, held bool) reply {
	t.Helper()
	resp := open(t, method, url, h, body)
	if held && resp.StatusCode != 401 && resp.StatusCode != 403 {
		resp.Body.Close()
		return reply{what: method + " " + url, status: resp.StatusCode, header: resp.Header}
	}
	return readReply(t, method+" "+url, resp)
}

// wantRefusal checks a 401 or 403 in the listener's error format: Pico
// and admin JSON with an "error" field, Durable Streams plain text, no
// body to a HEAD, a challenge with every 401 and none with a 403, and
// never the token's secret.
func wantRefusal(t *testing.T, r reply, listener string, status int, token string) {
	t.Helper()
	r.wantStatus(t, status)
	challenge := map[bool]string{true: `Bearer realm="pico"`}[status == http.StatusUnauthorized]
	r.wantHeaders(t, "WWW-Authenticate", challenge)
	if _, secret, ok := strings.Cut(token, "."); ok && secret != "" && strings.Contains(string(r.body), secret) {
		t.Errorf("%s: the refusal shows the token's secret: %s", r.what, clipBody(r.body))
	}
	if strings.HasPrefix(r.what, "HEAD ") {
		if len(r.body) != 0 {
			t.Errorf("%s: a HEAD refusal has a body %s", r.what, clipBody(r.body))
		}
		return
	}
	ct := r.header.Get("Content-Type")
	switch listener {
	case lnPico, lnAdmin:
		var e struct {
			Error string `json:"error"`
		}
		if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(r.body, &e) != nil || e.Error == "" {
			t.Errorf("%s: refusal %q %s, want JSON with an \"error\" field", r.what, ct, clipBody(r.body))
		}
		if want := map[int]string{401: "unauthorized", 403: "forbidden"}[status]; listener == lnPico && e.Error != want {
			t.Errorf("%s: error code %q, want %q", r.what, e.Error, want)
		}
	case lnDS:
		if !strings.HasPrefix(ct, "text/plain") || len(strings.TrimSpace(string(r.body))) == 0 {
			t.Errorf("%s: refusal %q %s, want a plain-text message", r.what, ct, clipBody(r.body))
		}
	}
}
