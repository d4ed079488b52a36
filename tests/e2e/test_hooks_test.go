package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultInjectionIsOffUnlessAsked: without --test-fault-injection the
// hook's path is an ordinary (missing) stream on both protocols.
func TestFaultInjectionIsOffUnlessAsked(t *testing.T) {
	pico, ds := startBothProtocols(t)
	for _, base := range []string{pico, ds} {
		r := send(t, "POST", base+"/_test/inject-error", hdr("Content-Type", "application/json"), []byte(`{"path":"/s","status":503}`))
		if r.status == 200 {
			t.Fatalf("%s armed a fault without --test-fault-injection", base)
		}
	}
}

// TestFaultInjectionFailsRequestsOnItsListener: with the flag, each
// listener arms its own faults; a status fault answers its count of
// requests, a dropped connection answers nothing, and clearing disarms.
func TestFaultInjectionFailsRequestsOnItsListener(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0", "--test-fault-injection"}})
	pico, ds := n.URL, dsURL(t, n)
	send(t, "PUT", ds+"/s", hdr("Content-Type", "text/plain"), nil).wantStatus(t, 201)
	send(t, "POST", ds+"/_test/inject-error", hdr("Content-Type", "application/json"),
		[]byte(`{"path":"/s","status":503,"count":2,"retryAfter":1,"method":"POST"}`)).wantStatus(t, 200)
	send(t, "POST", pico+"/s", hdr("Content-Type", "text/plain"), []byte("pico")).wantStatus(t, 200)
	send(t, "GET", ds+"/s?offset=-1", nil, nil).wantStatus(t, 200).wantBody(t, "pico")
	for range 2 {
		send(t, "POST", ds+"/s", hdr("Content-Type", "text/plain"), []byte("lost")).wantStatus(t, 503).wantHeaders(t, "Retry-After", "1")
	}
	send(t, "POST", ds+"/s", hdr("Content-Type", "text/plain"), []byte("-ds")).wantStatus(t, 204)
	send(t, "GET", ds+"/s?offset=-1", nil, nil).wantStatus(t, 200).wantBody(t, "pico-ds")

	send(t, "POST", ds+"/_test/inject-error", hdr("Content-Type", "application/json"),
		[]byte(`{"path":"/s","dropConnection":true,"count":3}`)).wantStatus(t, 200)
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := fresh.Get(ds + "/s?offset=-1"); err == nil {
		resp.Body.Close()
		t.Fatalf("a dropped connection answered %d", resp.StatusCode)
	}
	send(t, "DELETE", ds+"/_test/inject-error", nil, nil).wantStatus(t, 200)
	send(t, "GET", ds+"/s?offset=-1", nil, nil).wantStatus(t, 200).wantBody(t, "pico-ds")
	send(t, "POST", ds+"/_test/inject-error", hdr("Content-Type", "application/json"), []byte(`{"path":"/s"}`)).wantStatus(t, 400)
}

// TestFaultInjectionIsRefusedWithAuth: the hook would let any client
// fail requests, so a node with auth required does not start with it.
func TestFaultInjectionIsRefusedWithAuth(t *testing.T) {
	dir := t.TempDir()
	serveRefused(t, []string{"--test-fault-injection", "--auth", "required", "--listen", "127.0.0.1:0", "--no-admin",
		"--meta-url", "sqlite:" + filepath.Join(dir, "meta.db"), "--storage", "file://" + filepath.Join(dir, "objects")},
		"--test-fault-injection cannot run with --auth required")
}

// TestWebhooksReachLoopbackOnlyWithTheFlag: a webhook subscription to
// 127.0.0.1 is refused unless --webhook-allow-loopback, and a public
// https one is accepted either way.
func TestWebhooksReachLoopbackOnlyWithTheFlag(t *testing.T) {
	create := func(base, id, url string) reply {
		body := `{"type":"webhook","pattern":"events/*","webhook":{"url":"` + url + `"}}`
		return send(t, "PUT", base+"/__ds/subscriptions/"+id, hdr("Content-Type", "application/json"), []byte(body))
	}
	_, ds := startBothProtocols(t)
	refused := create(ds, "local", "http://127.0.0.1:9/hook")
	if refused.status != 400 || !strings.Contains(string(refused.body), "localhost or 127.0.0.x are off") {
		t.Fatalf("a loopback webhook without the flag: %d %s", refused.status, refused.body)
	}
	create(ds, "public", "https://hooks.example.com/hook").wantStatus(t, 201)

	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0", "--webhook-allow-loopback"}})
	create(dsURL(t, n), "local", "http://127.0.0.1:9/hook").wantStatus(t, 201)
}
