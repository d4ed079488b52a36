package webhookhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// loopback lets the tests' senders reach their httptest servers.
var loopback = ports.WebhookPolicy{AllowLoopback: true}

func TestSendReachesLoopbackOnlyWhenThePolicyAllowsIt(t *testing.T) {
	var received int
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { received++ }))
	defer srv.Close()
	toLocalhost := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	byName := "http://localhost:" + srv.URL[strings.LastIndex(srv.URL, ":")+1:] + "/hook"
	for _, url := range []string{srv.URL + "/hook", byName} {
		_, err := New(Config{Resolve: toLocalhost}).Send(context.Background(), ports.WebhookRequest{URL: url})
		if !errors.Is(err, ports.ErrWebhookURLRejected) {
			t.Fatalf("%s with the default policy: %v, want a rejection", url, err)
		}
		resp, err := New(Config{Resolve: toLocalhost, Policy: loopback}).Send(context.Background(), ports.WebhookRequest{URL: url})
		if err != nil || resp.Status != http.StatusOK {
			t.Fatalf("%s with loopback allowed: %d %v", url, resp.Status, err)
		}
	}
	if received != 2 {
		t.Fatalf("the receiver got %d webhooks, want 2", received)
	}
}

func TestSendPostsBodyAndHeaders(t *testing.T) {
	var got struct {
		method, signature, contentType, body string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.body = r.Method, string(b)
		got.signature, got.contentType = r.Header.Get("Webhook-Signature"), r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"done":true}`))
	}))
	defer srv.Close()
	resp, err := New(Config{Policy: loopback}).Send(context.Background(), ports.WebhookRequest{URL: srv.URL + "/hook", Body: []byte(`{"a":1}`),
		Headers: map[string]string{"Webhook-Signature": "t=1,kid=k,ed25519=x", "Content-Type": "application/json"}})
	if err != nil || resp.Status != http.StatusAccepted || string(resp.Body) != `{"done":true}` {
		t.Fatalf("answer %d %q %v", resp.Status, resp.Body, err)
	}
	if got.method != "POST" || got.body != `{"a":1}` || got.signature != "t=1,kid=k,ed25519=x" || got.contentType != "application/json" {
		t.Fatalf("received %+v", got)
	}
}

func TestSendBoundsTheAnswerAndFollowsNoRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
	}))
	defer srv.Close()
	s := New(Config{MaxResponseBytes: 10, Policy: loopback})
	resp, err := s.Send(context.Background(), ports.WebhookRequest{URL: srv.URL + "/big"})
	if err != nil || len(resp.Body) != 10 {
		t.Fatalf("bounded answer: %d bytes %v", len(resp.Body), err)
	}
	resp, err = s.Send(context.Background(), ports.WebhookRequest{URL: srv.URL + "/redirect"})
	if err != nil || resp.Status != http.StatusFound {
		t.Fatalf("redirect: %d %v", resp.Status, err)
	}
}

func TestSendRefusesPrivateAddresses(t *testing.T) {
	s := New(Config{Resolve: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("::1")}, nil
	}})
	_, err := s.Send(context.Background(), ports.WebhookRequest{URL: "https://rebound.example.com/hook"})
	if !errors.Is(err, ErrAddressRefused) {
		t.Fatalf("a name resolving to private addresses: %v", err)
	}
	_, err = s.Send(context.Background(), ports.WebhookRequest{URL: "http://10.0.0.1/hook"})
	if !errors.Is(err, ports.ErrWebhookURLRejected) {
		t.Fatalf("a private URL: %v", err)
	}
}

func TestSendTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := New(Config{Timeout: 100 * time.Millisecond, Policy: loopback}).Send(context.Background(), ports.WebhookRequest{URL: srv.URL})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("slow receiver: %v after %v", err, time.Since(start))
	}
}
