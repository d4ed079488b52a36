package e2e

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/tests/pgtest"
)

// followingClient follows redirects the way a client of a cluster does.
var followingClient = &http.Client{Timeout: 20 * time.Second}

// TestTwoNodesRedirectToOwner runs two nodes on one metadata log and one
// object store: a request for a stream to the node that does not own it is
// answered 307 to the owner's advertised URL, path and query kept.
func TestTwoNodesRedirectToOwner(t *testing.T) {
	meta := clusterMetaURL(t)
	storage := t.TempDir()
	// The owner advertises a name other than its listen address, so the
	// test tells the advertised URL from the address it binds.
	ownerAddr := freeAddr(t)
	advertised := "http://localhost:" + ownerAddr[strings.LastIndex(ownerAddr, ":")+1:]
	owner := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 1,
		listen: ownerAddr, flags: []string{"--http-address", advertised}})
	if owner.Advertised != advertised {
		t.Fatalf("node 1 says it is advertised as %q, want %q", owner.Advertised, advertised)
	}
	other := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 2})

	const path = "/route/orders"
	mustCreateOn(t, owner, nil, path, "text/plain")
	mustAppend(t, owner.URL+path, "text/plain", []byte("a"))

	const query = "?seq=0&format=json"
	r := awaitAnswer(t, other.URL+path+query, http.StatusTemporaryRedirect, http.StatusNotFound, 10*time.Second)
	r.wantHeaders(t, "Location", owner.Advertised+path+query, "X-Content-Type-Options", "nosniff")
	for _, tc := range []struct {
		method string
		h      http.Header
		body   []byte
	}{
		{"POST", hdr("Content-Type", "text/plain"), []byte("not here")},
		{"HEAD", nil, nil},
		{"GET", nil, nil},
		{"DELETE", nil, nil},
		{"POST", hdr("Pico-Trim-Seq", "1"), nil},
	} {
		send(t, tc.method, other.URL+path, tc.h, tc.body).wantStatus(t, 307).
			wantHeaders(t, "Location", owner.Advertised+path)
	}
	// The redirected requests did nothing on either node.
	send(t, "HEAD", owner.URL+path, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Next-Seq", "1", "Pico-Start-Seq", "0")

	followed, err := followingClient.Post(other.URL+path, "text/plain", strings.NewReader("b"))
	if err != nil {
		t.Fatal(err)
	}
	followed.Body.Close()
	if followed.StatusCode != 200 || followed.Header.Get("Pico-Start-Seq") != "1" {
		t.Fatalf("POST following the redirect: %d, Pico-Start-Seq %q; want 200 and 1", followed.StatusCode, followed.Header.Get("Pico-Start-Seq"))
	}
	resp, err := followingClient.Get(other.URL + path + query)
	if err != nil {
		t.Fatal(err)
	}
	page := readReply(t, "GET (followed) "+other.URL+path+query, resp).wantStatus(t, 200)
	wantBodies(t, page.what, page.records(t), 0, "a", "b")
}

// clusterMetaURL returns a fresh Postgres database for nodes of one
// cluster to share. SQLite serves a single node, so a test of several
// needs Postgres (PICOMQ_PG_URL): it skips without it, or fails when
// PICOMQ_REQUIRE_PG=1.
func clusterMetaURL(t *testing.T) string {
	t.Helper()
	if os.Getenv(pgtest.EnvURL) == "" && os.Getenv(pgtest.EnvRequire) != "1" {
		t.Skipf("nodes of a cluster need one shared metadata log and SQLite serves a single node: set %s to a Postgres server to run this test", pgtest.EnvURL)
	}
	return pgtest.URL(t) // a fresh database, dropped at the end
}

// awaitAnswer polls url until it answers want, while it answers
// meanwhile (the metadata log reaches a node asynchronously); any other
// status fails the test.
func awaitAnswer(t *testing.T, url string, want, meanwhile int, within time.Duration) reply {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := send(t, "GET", url, nil, nil)
		if r.status == want {
			return r
		}
		if r.status != meanwhile || time.Now().After(deadline) {
			r.wantStatus(t, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRedirectsKeepEachClientOnItsProtocol runs two nodes that serve Pico
// and, beside it, Durable Streams: a Durable Streams request for a stream
// the other node owns is redirected to that node's Durable Streams
// listener, a Pico request to its Pico listener; each client reads the
// stream in its own protocol there.
func TestRedirectsKeepEachClientOnItsProtocol(t *testing.T) {
	meta, storage := clusterMetaURL(t), t.TempDir()
	both := []string{"--ds-listen", "127.0.0.1:0"}
	owner := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 1, flags: both})
	other := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 2, flags: both})
	const path = "/route/both"
	mustCreateOn(t, owner, nil, path, "application/json")
	mustAppend(t, owner.URL+path, "application/json", []byte(`{"n":1}`))

	awaitAnswer(t, other.URL+path+"?seq=0", http.StatusTemporaryRedirect, http.StatusNotFound, 10*time.Second).
		wantHeaders(t, "Location", owner.Advertised+path+"?seq=0")
	const offset = "?offset=-1"
	send(t, "GET", dsURL(t, other)+path+offset, nil, nil).wantStatus(t, http.StatusTemporaryRedirect).
		wantHeaders(t, "Location", dsURL(t, owner)+path+offset)
	resp, err := followingClient.Get(dsURL(t, other) + path + offset)
	if err != nil {
		t.Fatal(err)
	}
	page := readReply(t, "GET (followed) "+dsURL(t, other)+path+offset, resp).wantStatus(t, 200)
	if page.header.Get("Stream-Next-Offset") == "" {
		t.Fatalf("the followed Durable Streams read was not answered in Durable Streams: %v", page.header)
	}
	wantJSONEqual(t, page.body, `[{"n":1}]`)
}
