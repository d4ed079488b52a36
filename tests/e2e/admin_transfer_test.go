package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminTransferMovesAStream moves a stream between two nodes with
// `pico admin transfer`: the writer lets it go, both nodes send its
// requests to the target, which opens it with every record; asked of the
// node that does not write it, the transfer goes to the writer.
func TestAdminTransferMovesAStream(t *testing.T) {
	meta := clusterMetaURL(t)
	storage := t.TempDir()
	first := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 1})
	second := startNode(t, nodeConfig{dataDir: t.TempDir(), metaURL: meta, storageDir: storage, nodeID: 2})

	const path = "/transfer/orders"
	mustCreateOn(t, first, nil, path, "text/plain")
	mustAppend(t, first.URL+path, "text/plain", []byte("a"))
	mustCreateOn(t, first, nil, "/transfer/idle", "text/plain")
	mustAppend(t, first.URL+"/transfer/idle", "text/plain", []byte("x"))

	// The target opens the stream as soon as it applies the transfer, with
	// no request for it: --wait ends once it has.
	start := time.Now()
	waited := runPico(t, nil, "", "admin", "transfer", "/transfer/idle", "--to-node", "2", "--wait", "--admin-endpoint", first.AdminURL)
	if waited.code != 0 || !strings.Contains(waited.stdout, "owner         node 2 at epoch") || !strings.Contains(waited.stdout, "(open: true)") {
		t.Fatalf("admin transfer --wait of an idle stream: %+v", waited)
	}
	t.Logf("an idle stream changed hands in %v", time.Since(start).Round(10*time.Millisecond))

	moved := runPico(t, nil, "", "admin", "transfer", path, "--to-node", "2", "--admin-endpoint", first.AdminURL)
	if moved.code != 0 || !strings.Contains(moved.stdout, "transfer to   node 2\n") || !strings.Contains(moved.stdout, "(open: ") {
		t.Fatalf("admin transfer: %+v", moved)
	}
	send(t, "GET", first.URL+path, nil, nil).wantStatus(t, http.StatusTemporaryRedirect).
		wantHeaders(t, "Location", second.Advertised+path)

	followed, err := followingClient.Post(first.URL+path, "text/plain", strings.NewReader("b"))
	if err != nil {
		t.Fatal(err)
	}
	followed.Body.Close()
	if followed.StatusCode != http.StatusOK || followed.Header.Get("Pico-Start-Seq") != "1" {
		t.Fatalf("POST following the redirect: %d, Pico-Start-Seq %q; want 200 and 1", followed.StatusCode, followed.Header.Get("Pico-Start-Seq"))
	}
	page := send(t, "GET", second.URL+path+"?seq=0&format=json", nil, nil).wantStatus(t, http.StatusOK)
	wantBodies(t, page.what, page.records(t), 0, "a", "b")

	// The target has opened it: --wait returns at once.
	shown := runPico(t, nil, "", "admin", "transfer", path, "--to-node", "2", "--wait", "--admin-endpoint", second.AdminURL)
	if shown.code != 0 || !strings.Contains(shown.stdout, "owner         node 2 at epoch") || !strings.Contains(shown.stdout, "(open: true)") {
		t.Fatalf("admin transfer --wait after the target opened the stream: %+v", shown)
	}
	// Asked of a node that does not write the stream, the transfer is
	// handed to the writer.
	back := runPico(t, nil, "", "admin", "transfer", path, "--to-node", "1", "--wait", "--admin-endpoint", first.AdminURL)
	if back.code != 0 || !strings.Contains(back.stdout, "owner         node 1 at epoch") || !strings.Contains(back.stdout, "(open: true)") {
		t.Fatalf("transfer asked of a node that does not write the stream: %+v", back)
	}
	page = send(t, "GET", first.URL+path+"?seq=0&format=json", nil, nil).wantStatus(t, http.StatusOK)
	wantBodies(t, page.what, page.records(t), 0, "a", "b")
}
