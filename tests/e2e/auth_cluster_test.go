package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picoclient"
	"github.com/picomq/pico/domain"
)

// TestAuthClusterTwoNodes runs two nodes with auth on one metadata log
// (Postgres) and one object store: the same bootstrap token starts both, a
// token issued on one works on the other and its revocation holds there
// within a second, a redirect between them carries the token with the
// project's clients (not with a plain net/http client), and a node given
// another secret under the bootstrap id does not start.
func TestAuthClusterTwoNodes(t *testing.T) {
	meta := clusterMetaURL(t)
	storage := t.TempDir()
	// Node 1 advertises localhost while node 2 is reached at 127.0.0.1, so
	// a redirect from node 2 to node 1 goes to another host, as between
	// real nodes, and net/http drops the credential on it.
	addr1 := freeAddr(t)
	advertised := "http://localhost:" + addr1[strings.LastIndex(addr1, ":")+1:]
	n1 := startAuthNode(t, nodeConfig{metaURL: meta, storageDir: storage, nodeID: 1, listen: addr1,
		flags: append([]string{"--http-address", advertised}, liveFlags...)})
	tokenFile := filepath.Join(t.TempDir(), "root.token")
	if err := os.WriteFile(tokenFile, []byte(rootToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same bootstrap token, from a file: stored already, so a no-op.
	n2 := startAuthNode(t, nodeConfig{metaURL: meta, storageDir: storage, nodeID: 2,
		flags: append([]string{"--auth-bootstrap-token-file", tokenFile}, liveFlags...)})
	send(t, "GET", n2.AdminURL+"/admin/cluster", bearer(rootToken), nil).wantStatus(t, http.StatusOK)

	scope := scopeJSON([]string{"/c/*"}, []string{"stream.read", "stream.write"}, []string{"pico"})
	wire := issueToken(t, n1.AdminURL, rootToken, "c-rw", scope)
	tok := bearer(wire)
	t.Run("issued-on-1-works-on-2", func(t *testing.T) {
		took := pollUntil(t, "HEAD", n2.URL+"/c/none", tok, http.StatusNotFound, 5*time.Second)
		t.Logf("node 2 accepted the token %v after node 1 issued it", took.Round(time.Millisecond))
		send(t, "PUT", n2.URL+"/c/on-2", withType(tok, "text/plain"), nil).wantStatus(t, http.StatusCreated)
		// Wherever placement put it, the tests below read it on node 2.
		if moved := runPico(t, []string{"PICO_TOKEN=" + rootToken}, "", "admin", "transfer", "/c/on-2", "--to-node", "2", "--wait",
			"--admin-endpoint", n2.AdminURL); moved.code != 0 {
			t.Fatalf("moving /c/on-2 to node 2: %+v", moved)
		}
	})

	mustCreateOn(t, n1.picoNode, []string{"PICO_TOKEN=" + rootToken}, "/c/orders", "text/plain")
	send(t, "POST", n1.URL+"/c/orders", bearer(rootToken, "Content-Type", "text/plain"), []byte("a")).wantStatus(t, http.StatusOK)
	t.Run("redirect-carries-the-token", func(t *testing.T) {
		pollUntil(t, "HEAD", n2.URL+"/c/orders", tok, http.StatusTemporaryRedirect, 5*time.Second)
		send(t, "GET", n2.URL+"/c/orders", tok, nil).wantStatus(t, http.StatusTemporaryRedirect).
			wantHeaders(t, "Location", advertised+"/c/orders")

		// A plain net/http client follows the 307 but drops Authorization
		// on the way to another host: node 1 refuses the request.
		req, err := http.NewRequest("POST", n2.URL+"/c/orders", bytes.NewReader([]byte("plain")))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+wire)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r := readReply(t, "POST (net/http, following) "+req.URL.String(), resp)
		if resp.Request.URL.Host == req.URL.Host || r.status != http.StatusUnauthorized {
			t.Fatalf("%s: %d at %s; want net/http to follow to node 1 without the credential, and a 401", r.what, r.status, resp.Request.URL)
		}

		// The project's client re-attaches the credential on every hop.
		c := picoclient.New(n2.URL, picoclient.Options{Token: wire, Timeout: 10 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.Append(ctx, "/c/orders", []picoclient.Record{{Body: []byte("client")}}, picoclient.AppendOptions{ContentType: "text/plain"}); err != nil {
			t.Fatalf("picoclient append through node 2's redirect: %v", err)
		}
		var api *picoclient.APIError
		anon := picoclient.New(n2.URL, picoclient.Options{Timeout: 10 * time.Second})
		if _, err := anon.Append(ctx, "/c/orders", []picoclient.Record{{Body: []byte("anonymous")}}, picoclient.AppendOptions{}); !errors.As(err, &api) || api.Status != http.StatusUnauthorized {
			t.Fatalf("picoclient append without a token: %v, want a 401", err)
		}

		// And so does the CLI.
		env := []string{"PICO_CONFIG=" + filepath.Join(t.TempDir(), "config.toml")}
		runPico(t, env, "cli\n", "--endpoint", n2.URL, "--token", wire, "append", "/c/orders").want(t, 0, "")
		runPico(t, env, "refused\n", "--endpoint", n2.URL, "append", "/c/orders").wantFailure(t, 5, "401")

		if got := readBodies(t, n1.URL+"/c/orders", bearer(rootToken)); !slices.Equal(got, []string{"a", "client", "cli"}) {
			t.Errorf("/c/orders holds %q, want a, client, cli", got)
		}
	})

	t.Run("revoked-on-1-refused-on-2", func(t *testing.T) {
		held := issueToken(t, n1.AdminURL, rootToken, "c-held", scope)
		pollUntil(t, "HEAD", n2.URL+"/c/on-2", bearer(held), http.StatusOK, 5*time.Second)
		ended := holdRead(t, n2.URL+"/c/on-2?seq=0&live=sse", held)

		revokeToken(t, n1.AdminURL, "c-held")
		heldRevoked := time.Now()
		revokeToken(t, n1.AdminURL, "c-rw")
		took := pollUntil(t, "HEAD", n2.URL+"/c/none", tok, http.StatusUnauthorized, 5*time.Second)
		t.Logf("node 2 refused the token %v after node 1 revoked it", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("node 2 refused the revoked token only after %v, want within a second", took)
		}
		select {
		case e := <-ended:
			delay := e.at.Sub(heldRevoked)
			t.Logf("node 2's event stream held by the revoked token ended %v after the revocation", delay.Round(time.Millisecond))
			if delay > 2*time.Second {
				t.Errorf("the event stream ended %v after the revocation, want within ~1s", delay)
			}
		case <-time.After(2*time.Second - time.Since(heldRevoked)):
			t.Error("node 2's event stream held by the revoked token is still open 2s after the revocation")
		}
	})

	t.Run("another-secret-under-the-bootstrap-id", func(t *testing.T) {
		other := domain.FormatToken(domain.Credential{ID: rootCred.ID, Secret: []byte("another-root-secret-0123456789ab")})
		args := nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 3}.args()
		serveRefused(t, append(args, "--auth", "required", "--auth-bootstrap-token", other),
			`a different token is stored under the bootstrap token's id ("root")`, "revoke it first")
		// The stored root token is untouched.
		send(t, "GET", n2.AdminURL+"/admin/cluster", bearer(rootToken), nil).wantStatus(t, http.StatusOK)
		send(t, "GET", n2.AdminURL+"/admin/cluster", bearer(other), nil).wantStatus(t, http.StatusUnauthorized)
	})
}
