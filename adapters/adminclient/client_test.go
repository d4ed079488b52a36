package adminclient

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/picomq/pico/domain"
)

const testToken = "cm9vdA.AQEBAQEBAQEBAQEBAQEBAQ"

// seen is what the fake listener saw of the last request.
type seen struct {
	method, uri, authorization, contentType string
	body                                    []byte
}

// serve starts a fake admin listener answering status and body to every
// request, and returns a client sending opts and what the listener saw.
func serve(t *testing.T, status int, body string, opts ...Option) (*Client, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*s = seen{r.Method, r.RequestURI, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, "test", opts...), s
}

func TestTokensListsWithTheToken(t *testing.T) {
	c, s := serve(t, 200, `{"tokens":[{"id":"root","scope":{"streams":[]},"createdAtMs":5},{"id":"a","scope":{},"issuer":"root","createdAtMs":6}]}`,
		WithToken(testToken))
	got, err := c.Tokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.method != http.MethodGet || s.uri != "/admin/tokens" || s.authorization != "Bearer "+testToken {
		t.Fatalf("the listener saw %+v", s)
	}
	if len(got.Tokens) != 2 || got.Tokens[0].ID != "root" || string(got.Tokens[0].Scope) != `{"streams":[]}` ||
		got.Tokens[1].Issuer != "root" || got.Tokens[1].CreatedAtMs != 6 {
		t.Fatalf("tokens %+v", got)
	}
}

func TestIssueTokenPostsTheIDAndTheScopesJSON(t *testing.T) {
	c, s := serve(t, 201, `{"id":"svc/ingest","scope":{},"issuer":"root","createdAtMs":7,"token":"the-wire-token"}`, WithToken(testToken))
	scope := domain.Scope{Streams: domain.Matchers{{Value: "/logs/", Prefix: true}}, Groups: 1 << domain.GroupStreamWrite,
		Audiences: 1 << domain.AudiencePico, Expires: true, ExpiresAtMs: 1_900_000_000_000}
	got, err := c.IssueToken(t.Context(), "svc/ingest", scope)
	if err != nil {
		t.Fatal(err)
	}
	if got.Wire != "the-wire-token" || got.ID != "svc/ingest" || got.Issuer != "root" {
		t.Fatalf("issued %+v", got)
	}
	if s.method != http.MethodPost || s.uri != "/admin/tokens" || s.authorization != "Bearer "+testToken || s.contentType != "application/json" {
		t.Fatalf("the listener saw %+v", s)
	}
	var body struct {
		ID    string
		Scope json.RawMessage
	}
	if err := json.Unmarshal(s.body, &body); err != nil {
		t.Fatalf("body %s: %v", s.body, err)
	}
	sent, err := domain.ParseScope(body.Scope)
	if err != nil || body.ID != "svc/ingest" {
		t.Fatalf("body %s: %v", s.body, err)
	}
	if sent.Streams[0] != scope.Streams[0] || len(sent.Streams) != 1 || sent.Groups != scope.Groups || sent.Audiences != scope.Audiences ||
		!sent.Expires || sent.ExpiresAtMs != scope.ExpiresAtMs {
		t.Fatalf("sent scope %+v, want %+v", sent, scope)
	}
}

func TestRevokeTokenDeletesTheEscapedID(t *testing.T) {
	c, s := serve(t, 204, "", WithToken(testToken))
	if err := c.RevokeToken(t.Context(), "svc/ingest"); err != nil {
		t.Fatal(err)
	}
	if s.method != http.MethodDelete || s.uri != "/admin/tokens/svc%2Fingest" || s.authorization != "Bearer "+testToken || len(s.body) != 0 {
		t.Fatalf("the listener saw %+v", s)
	}
}

func TestRefusalsCarryTheListenersMessage(t *testing.T) {
	for _, tc := range []struct {
		status int
		call   func(*Client) error
	}{
		{http.StatusForbidden, func(c *Client) error { _, err := c.IssueToken(t.Context(), "x", domain.RootScope()); return err }},
		{http.StatusConflict, func(c *Client) error { _, err := c.IssueToken(t.Context(), "x", domain.RootScope()); return err }},
		{http.StatusNotFound, func(c *Client) error { return c.RevokeToken(t.Context(), "x") }},
		{http.StatusUnauthorized, func(c *Client) error { _, err := c.Tokens(t.Context()); return err }},
	} {
		c, _ := serve(t, tc.status, `{"error":"refused for a reason"}`)
		var e *Error
		if err := tc.call(c); !errors.As(err, &e) || e.Status != tc.status || e.Message != "refused for a reason" {
			t.Fatalf("status %d: err %v", tc.status, err)
		}
	}
}

func TestNoTokenSendsNoAuthorizationAndStreamNamesStayEscaped(t *testing.T) {
	c, s := serve(t, 200, `{"name":"/a b%"}`)
	if _, err := c.Stream(t.Context(), "a b%"); err != nil {
		t.Fatal(err)
	}
	if s.authorization != "" || s.uri != "/admin/streams/a%20b%25" {
		t.Fatalf("the listener saw %+v", s)
	}
}

func TestDrainPostsAndFollowsTheNodesDrain(t *testing.T) {
	c, s := serve(t, 200, `{"node":2,"slots":0,"remainingStreams":3,"movedStreams":5,"running":true,"failedMoves":1,"lastError":"x"}`)
	got, err := c.DrainNode(t.Context(), 2)
	if err != nil || s.method != http.MethodPost || s.uri != "/admin/nodes/2/drain" || len(s.body) != 0 {
		t.Fatalf("drain: %v; the listener saw %+v", err, s)
	}
	if want := (Drain{Node: 2, Remaining: 3, Moved: 5, Running: true, FailedMoves: 1, LastError: "x"}); got != want {
		t.Fatalf("drain %+v, want %+v", got, want)
	}
	if _, err := c.DrainProgress(t.Context(), 2); err != nil || s.method != http.MethodGet || s.uri != "/admin/nodes/2/drain" {
		t.Fatalf("drain progress: %v; the listener saw %+v", err, s)
	}
}
