package dshttp

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/ports"
)

// fakeSubscriptions records what the listener asks and answers with what
// it is told.
type fakeSubscriptions struct {
	ref     ports.SubscriptionRef
	spec    ports.SubscriptionSpec
	paths   []string
	token   string
	ack     ports.WakeAck
	worker  string
	sub     ports.Subscription
	created bool
	next    bool
	claim   ports.WakeClaim
	err     error
}

func (f *fakeSubscriptions) Put(_ context.Context, ref ports.SubscriptionRef, spec ports.SubscriptionSpec) (ports.Subscription, bool, error) {
	f.ref, f.spec = ref, spec
	return f.sub, f.created, f.err
}

func (f *fakeSubscriptions) Get(_ context.Context, ref ports.SubscriptionRef) (ports.Subscription, error) {
	f.ref = ref
	return f.sub, f.err
}

func (f *fakeSubscriptions) Delete(_ context.Context, ref ports.SubscriptionRef) error {
	f.ref = ref
	return f.err
}

func (f *fakeSubscriptions) AddStreams(_ context.Context, ref ports.SubscriptionRef, paths []string) error {
	f.ref, f.paths = ref, paths
	return f.err
}

func (f *fakeSubscriptions) RemoveStream(_ context.Context, ref ports.SubscriptionRef, path string) error {
	f.ref, f.paths = ref, []string{path}
	return f.err
}

func (f *fakeSubscriptions) JWKS(context.Context) ([]ports.JWK, error) {
	return []ports.JWK{{Kty: "OKP", Crv: "Ed25519", Kid: "ds_k", Use: "sig", Alg: "EdDSA", X: "AAAA"}}, f.err
}

func (f *fakeSubscriptions) Callback(_ context.Context, ref ports.SubscriptionRef, token string, ack ports.WakeAck) (bool, error) {
	f.ref, f.token, f.ack = ref, token, ack
	return f.next, f.err
}

func (f *fakeSubscriptions) Claim(_ context.Context, ref ports.SubscriptionRef, worker string) (ports.WakeClaim, error) {
	f.ref, f.worker = ref, worker
	return f.claim, f.err
}

func (f *fakeSubscriptions) Ack(_ context.Context, ref ports.SubscriptionRef, token string, ack ports.WakeAck) (bool, error) {
	f.ref, f.token, f.ack = ref, token, ack
	return f.next, f.err
}

func (f *fakeSubscriptions) Release(_ context.Context, ref ports.SubscriptionRef, token, wakeID string, generation uint64) error {
	f.ref, f.token, f.ack = ref, token, ports.WakeAck{WakeID: wakeID, Generation: generation}
	return f.err
}

func withSubscriptions(t *testing.T) (*harness, *fakeSubscriptions) {
	f := &fakeSubscriptions{}
	return newHarness(t, func(c *Config) { c.Subscriptions = f }), f
}

// decode parses a JSON answer.
func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	return m
}

func wantCode(t *testing.T, status int, body []byte, wantStatus int, code string) map[string]any {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d; body %s", status, wantStatus, body)
	}
	e, _ := decode(t, body)["error"].(map[string]any)
	if e["code"] != code || e["message"] == "" {
		t.Fatalf("error %v, want code %s", e, code)
	}
	return e
}

func TestPutSubscription(t *testing.T) {
	h, f := withSubscriptions(t)
	f.created = true
	f.sub = ports.Subscription{ID: "s1", Type: ports.WebhookSubscription, Pattern: "events/*", WebhookURL: "http://127.0.0.1:9/h",
		Signing:  &ports.WebhookSigning{Alg: "ed25519", KeyID: "ds_k", JWKSURL: "http://example.com/v1/stream/__ds/jwks.json"},
		Streams:  []ports.LinkedStream{{Path: "events/a", Acked: 3, Tail: 3}, {Path: "m", Explicit: true}},
		LeaseTTL: time.Second, CreatedMs: 1_700_000_000_000}
	body := `{"type":"webhook","pattern":"events/*","streams":["m"],"webhook":{"url":"http://127.0.0.1:9/h"},` +
		`"lease_ttl_ms":1000,"description":"d","wake_stream":"w"}`
	rec := h.do(http.MethodPut, "http://example.com/v1/stream/__ds/subscriptions/s%2D1", []byte(body), "Content-Type", "application/json")
	handlertest.WantStatus(t, rec, http.StatusCreated)
	want := ports.SubscriptionSpec{Type: "webhook", Pattern: "events/*", Streams: []string{"m"}, WebhookURL: "http://127.0.0.1:9/h",
		WakeStream: "w", LeaseTTL: time.Second, Description: "d", ControlURL: "http://example.com/v1/stream/__ds/"}
	if f.ref != (ports.SubscriptionRef{Root: "/v1/stream/", ID: "s-1"}) || f.spec.ControlURL != want.ControlURL ||
		f.spec.Type != want.Type || f.spec.LeaseTTL != want.LeaseTTL || f.spec.Streams[0] != "m" || f.spec.WakeStream != "w" {
		t.Fatalf("asked %+v %+v", f.ref, f.spec)
	}
	got := decode(t, rec.Body.Bytes())
	webhook := got["webhook"].(map[string]any)
	signing := webhook["signing"].(map[string]any)
	streams := got["streams"].([]any)
	if got["id"] != "s1" || got["subscription_id"] != "s1" || got["status"] != "active" || got["lease_ttl_ms"] != 1000.0 ||
		got["created_at"] != "2023-11-14T22:13:20.000Z" || webhook["url"] != "http://127.0.0.1:9/h" || signing["kid"] != "ds_k" ||
		signing["alg"] != "ed25519" || signing["jwks_url"] == nil || got["webhook_secret"] != nil || len(streams) != 2 {
		t.Fatalf("answer %s", rec.Body)
	}
	if s := streams[0].(map[string]any); s["path"] != "events/a" || s["link_type"] != "glob" || s["acked_offset"] != off(3) {
		t.Fatalf("stream %v", s)
	}
	f.created = false
	handlertest.WantStatus(t, h.do(http.MethodPut, "/v1/stream/__ds/subscriptions/s1", []byte(body)), http.StatusOK)
}

func TestPutSubscriptionRejectsMalformedBodies(t *testing.T) {
	h, f := withSubscriptions(t)
	for _, body := range []string{"", "[]", `{"type":1}`, `{"type":"webhook","lease_ttl_ms":1.5}`, `{"type":"webhook","lease_ttl_ms":0}`} {
		rec := h.do(http.MethodPut, "/v1/stream/__ds/subscriptions/s1", []byte(body))
		wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusBadRequest, "INVALID_REQUEST")
	}
	f.err = &ports.SubscriptionError{Kind: ports.ErrWebhookURLRejected, Message: "private"}
	rec := h.do(http.MethodPut, "/v1/stream/__ds/subscriptions/s1", []byte(`{"type":"webhook"}`))
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusBadRequest, "WEBHOOK_URL_REJECTED")
	f.err = &ports.SubscriptionError{Kind: ports.ErrSubscriptionExists}
	rec = h.do(http.MethodPut, "/v1/stream/__ds/subscriptions/s1", []byte(`{"type":"webhook"}`))
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusConflict, "SUBSCRIPTION_ALREADY_EXISTS")
}

func TestSubscriptionStreamsRoutes(t *testing.T) {
	h, f := withSubscriptions(t)
	handlertest.WantStatus(t, h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/streams", []byte(`{"streams":["manual/b"]}`)), http.StatusNoContent)
	if len(f.paths) != 1 || f.paths[0] != "manual/b" {
		t.Fatalf("added %v", f.paths)
	}
	handlertest.WantStatus(t, h.do(http.MethodDelete, "/v1/stream/__ds/subscriptions/s1/streams/manual%2Fb", nil), http.StatusNoContent)
	if f.paths[0] != "manual/b" || f.ref.ID != "s1" {
		t.Fatalf("removed %v from %+v", f.paths, f.ref)
	}
	rec := h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/streams", []byte(`{"streams":[]}`))
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusBadRequest, "INVALID_REQUEST")
	handlertest.WantStatus(t, h.do(http.MethodDelete, "/v1/stream/__ds/subscriptions/s1", nil), http.StatusNoContent)
	f.err = &ports.SubscriptionError{Kind: ports.ErrSubscriptionNotFound}
	rec = h.do(http.MethodGet, "/v1/stream/__ds/subscriptions/s1", nil)
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusNotFound, "SUBSCRIPTION_NOT_FOUND")
}

func TestCallbackAndAck(t *testing.T) {
	h, f := withSubscriptions(t)
	body := []byte(`{"wake_id":"w1","generation":3,"acks":[{"stream":"events/a","offset":"` + off(7) + `"},{"path":"b","offset":"` + off(1) + `"}],"done":true}`)
	for _, route := range []string{"callback", "ack"} {
		f.next = true
		rec := h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/"+route, body, "Authorization", "Bearer tok")
		handlertest.WantStatus(t, rec, http.StatusOK)
		if rec.Body.String() != `{"next_wake":true,"ok":true}` {
			t.Fatalf("%s answer %s", route, rec.Body)
		}
		if f.token != "tok" || f.ack.WakeID != "w1" || f.ack.Generation != 3 || !f.ack.Done || len(f.ack.Acks) != 2 ||
			f.ack.Acks[0] != (ports.StreamAck{Path: "events/a", Offset: 7}) || f.ack.Acks[1].Path != "b" {
			t.Fatalf("%s asked %q %+v", route, f.token, f.ack)
		}
	}
	rec := h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/callback", body)
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusUnauthorized, "TOKEN_INVALID")
	rec = h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/ack", []byte(`{"acks":[{"stream":"a","offset":"-1"}]}`), "Authorization", "Bearer t")
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusConflict, "INVALID_OFFSET")
	f.err = &ports.SubscriptionError{Kind: ports.ErrFenced}
	rec = h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/callback", body, "Authorization", "Bearer tok")
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusConflict, "FENCED")
	f.err = &ports.SubscriptionError{Kind: ports.ErrTokenExpired}
	rec = h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1/ack", body, "Authorization", "Bearer tok")
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusUnauthorized, "TOKEN_EXPIRED")
}

func TestClaimAndRelease(t *testing.T) {
	h, f := withSubscriptions(t)
	f.claim = ports.WakeClaim{WakeID: "w", Generation: 2, Token: "t", LeaseTTL: time.Second,
		Streams: []ports.LinkedStream{{Path: "events/a", Acked: 1, Tail: 2, Pending: true}}}
	rec := h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/p/claim", []byte(`{"worker":"worker-1"}`))
	handlertest.WantStatus(t, rec, http.StatusOK)
	got := decode(t, rec.Body.Bytes())
	s := got["streams"].([]any)[0].(map[string]any)
	if f.worker != "worker-1" || got["wake_id"] != "w" || got["generation"] != 2.0 || got["token"] != "t" || got["lease_ttl_ms"] != 1000.0 ||
		s["tail_offset"] != off(2) || s["acked_offset"] != off(1) || s["has_pending"] != true || s["link_type"] != "glob" {
		t.Fatalf("claim answer %s", rec.Body)
	}
	rec = h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/p/release", []byte(`{"wake_id":"w","generation":2}`), "Authorization", "Bearer t")
	handlertest.WantStatus(t, rec, http.StatusNoContent)
	if f.token != "t" || f.ack.WakeID != "w" || f.ack.Generation != 2 {
		t.Fatalf("release asked %q %+v", f.token, f.ack)
	}
	f.err = &ports.SubscriptionError{Kind: ports.ErrAlreadyClaimed, Holder: "worker-1", Generation: 2}
	rec = h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/p/claim", []byte(`{"worker":"worker-2"}`))
	if e := wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusConflict, "ALREADY_CLAIMED"); e["current_holder"] != "worker-1" || e["generation"] != 2.0 {
		t.Fatalf("busy answer %s", rec.Body)
	}
	f.err = &ports.SubscriptionError{Kind: ports.ErrNoPendingWork}
	rec = h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/p/claim", []byte(`{"worker":"worker-2"}`))
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusConflict, "NO_PENDING_WORK")
}

func TestJWKS(t *testing.T) {
	h, _ := withSubscriptions(t)
	rec := h.do(http.MethodGet, "/v1/stream/__ds/jwks.json", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Content-Type", "application/jwk-set+json", "Cache-Control", "public, max-age=300")
	if rec.Body.String() != `{"keys":[{"alg":"EdDSA","crv":"Ed25519","kid":"ds_k","kty":"OKP","use":"sig","x":"AAAA"}]}` {
		t.Fatalf("key set %s", rec.Body)
	}
}

func TestUnknownControlRoutes(t *testing.T) {
	h, f := withSubscriptions(t)
	for _, target := range []string{"/v1/stream/__ds", "/v1/stream/__ds/", "/v1/stream/__ds/other", "/v1/stream/__ds/subscriptions/",
		"/v1/stream/__ds/subscriptions/s1/nope"} {
		rec := h.do(http.MethodGet, target, nil)
		wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusNotFound, "SUBSCRIPTION_NOT_FOUND")
	}
	rec := h.do(http.MethodPost, "/v1/stream/__ds/subscriptions/s1", nil)
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	rec = h.do(http.MethodGet, "/v1/stream/__ds/subscriptions/s1/claim", nil)
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	if f.ref.ID != "" || h.fake.Len() != 0 {
		t.Fatal("an unknown route reached the service")
	}
	f.err = ports.Errorf(ports.ErrUnavailable, "metadata down")
	rec = h.do(http.MethodGet, "/v1/stream/__ds/subscriptions/s1", nil)
	wantCode(t, rec.Code, rec.Body.Bytes(), http.StatusServiceUnavailable, "UNAVAILABLE")
}
