package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// liveReads are the live reads of both listeners, held ones: each waits
// at the tail of a stream with one record (a long-poll), or follows it
// (SSE). The escaped-key spellings are the same reads, which the gate
// must hold too.
func liveReads(n *authNode, name string) map[string]string {
	return map[string]string{
		"pico-long-poll":      n.URL + name + "?seq=1&live=long-poll",
		"pico-sse":            n.URL + name + "?seq=0&live=sse",
		"pico-sse-escaped":    n.URL + name + "?seq=0&liv%65=sse",
		"ds-long-poll":        n.DS + name + "?offset=now&live=long-poll",
		"ds-sse":              n.DS + name + "?offset=-1&live=sse",
		"ds-sse-escaped":      n.DS + name + "?offset=-1&liv%65=sse",
		"ds-long-poll-escape": n.DS + name + "?offset=now&%6Cive=long-poll",
	}
}

// liveFlags make a held read that is not ended stay open far longer than
// the test's bounds.
var liveFlags = []string{"--long-poll-timeout-sec", "20", "--sse-max-duration-sec", "30"}

// TestAuthLiveReadRefusedAtOnce: a live read that fails auth answers its
// 401 or 403 at once instead of holding the connection.
func TestAuthLiveReadRefusedAtOnce(t *testing.T) {
	n := startAuthNode(t, nodeConfig{flags: liveFlags})
	const name = "/live/refused"
	rootCreate(t, n.URL, name, "r0")
	writerOnly := issueToken(t, n.AdminURL, rootToken, "writer-only", scopeJSON([]string{"/live/*"}, []string{"stream.write"}, allAudiences))
	for what, url := range liveReads(n, name) {
		for _, c := range []struct {
			who    string
			h      http.Header
			status int
		}{
			{"no-token", nil, http.StatusUnauthorized},
			{"wrong-secret", bearer(rootToken + "x"), http.StatusUnauthorized},
			{"lacking-read", bearer(writerOnly), http.StatusForbidden},
		} {
			t.Run(what+"/"+c.who, func(t *testing.T) {
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				r := sendContext(t, ctx, url, c.h)
				if took := time.Since(start); took > 500*time.Millisecond {
					t.Errorf("%s: refused after %v, want at once", r.what, took)
				}
				r.wantStatus(t, c.status)
			})
		}
	}
}

// TestAuthRevocationEndsLiveReads holds every live read with one token and
// revokes it: each ends within about a second (HoldCheckEvery is 250ms; 2s
// allowed), a long-poll with a 401, an event stream by ending. A read held
// by another token goes on; a read held by an expiring token ends once it
// expires.
func TestAuthRevocationEndsLiveReads(t *testing.T) {
	n := startAuthNode(t, nodeConfig{flags: liveFlags})
	const name = "/live/held"
	rootCreate(t, n.URL, name, "r0")
	readScope := scopeJSON([]string{"/live/*"}, []string{"stream.read"}, []string{"pico", "durable_streams"})
	doomed := issueToken(t, n.AdminURL, rootToken, "doomed", readScope)
	kept := issueToken(t, n.AdminURL, rootToken, "kept", readScope)
	expiresAt := time.Now().Add(1500 * time.Millisecond)
	expiring := issueToken(t, n.AdminURL, rootToken, "expiring",
		scopeJSON([]string{"/live/*"}, []string{"stream.read"}, []string{"pico", "durable_streams"}, fmt.Sprintf(`"expiresAtMs": %d`, expiresAt.UnixMilli())))

	ended := map[string]<-chan heldEnd{}
	for what, url := range liveReads(n, name) {
		ended[what] = holdRead(t, url, doomed)
	}
	keptEnd := holdRead(t, n.URL+name+"?seq=0&live=sse", kept)
	expiringEnd := holdRead(t, n.DS+name+"?offset=-1&live=sse", expiring)
	// Every read is established (an event stream has its first event);
	// give the long-polls a moment to reach their wait.
	time.Sleep(200 * time.Millisecond)
	for what, ch := range ended {
		select {
		case e := <-ch:
			t.Fatalf("%s ended before the revocation: %+v", what, e)
		default:
		}
	}

	revokeToken(t, n.AdminURL, "doomed")
	revoked := time.Now()
	for what, ch := range ended {
		select {
		case e := <-ch:
			delay := e.at.Sub(revoked)
			t.Logf("%s ended %v after the revocation (status %d)", what, delay.Round(time.Millisecond), e.status)
			if delay > 2*time.Second {
				t.Errorf("%s ended %v after the revocation, want within ~1s", what, delay)
			}
			if e.sse && e.status != http.StatusOK || !e.sse && e.status != http.StatusUnauthorized {
				t.Errorf("%s: status %d (event stream %v); want a long-poll's 401 or an event stream that ends", what, e.status, e.sse)
			}
		case <-time.After(2*time.Second - time.Since(revoked)):
			t.Errorf("%s still open 2s after the revocation", what)
		}
	}
	select {
	case e := <-keptEnd:
		t.Errorf("a read held by a token not revoked ended: %+v", e)
	default:
	}
	select {
	case e := <-expiringEnd:
		delay := e.at.Sub(expiresAt)
		t.Logf("the expiring token's event stream ended %v after its expiry", delay.Round(time.Millisecond))
		if delay > 2*time.Second || delay < -100*time.Millisecond {
			t.Errorf("the expiring token's read ended %v after its expiry, want within ~1s of it", delay)
		}
	case <-time.After(time.Until(expiresAt) + 2*time.Second):
		t.Error("the expiring token's read is still open 2s after its expiry")
	}
	send(t, "GET", n.URL+name+"?seq=0", bearer(expiring), nil).wantStatus(t, http.StatusUnauthorized)
}

// heldEnd is how a held read ended.
type heldEnd struct {
	status int
	sse    bool
	at     time.Time
	err    error
}

// holdRead opens a live read with token and returns where its end is
// reported; for an event stream (a URL asking for SSE) it returns once the
// first event is in, for a long-poll at once.
func holdRead(t *testing.T, url, token string) <-chan heldEnd {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	out := make(chan heldEnd, 1)
	started := make(chan error, 1)
	go func() {
		resp, err := plainClient.Do(req)
		if err != nil {
			started <- err
			out <- heldEnd{err: err, at: time.Now()}
			return
		}
		defer resp.Body.Close()
		sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
		if !sse {
			started <- nil
			io.Copy(io.Discard, resp.Body)
			out <- heldEnd{status: resp.StatusCode, at: time.Now()}
			return
		}
		events, done := readEvents(resp.Body)
		if _, ok := <-events; !ok {
			started <- fmt.Errorf("%s: the event stream ended before its first event", url)
		} else {
			started <- nil
		}
		for range events {
		}
		err = <-done
		out <- heldEnd{status: resp.StatusCode, sse: true, at: time.Now(), err: err}
	}()
	if !strings.HasSuffix(url, "=sse") {
		return out // a long-poll sends nothing until it answers
	}
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no event within 5s", url)
	}
	return out
}

// sendContext is a GET under ctx, read whole.
func sendContext(t *testing.T, ctx context.Context, url string, h http.Header) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return readReply(t, "GET "+url, resp)
}
