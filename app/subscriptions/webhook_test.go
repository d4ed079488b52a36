package subscriptions

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

var signatureHeader = regexp.MustCompile(`^t=(\d+),kid=([^,]+),ed25519=([A-Za-z0-9_-]+)$`)

// verify checks a delivery's signature the way a receiver does: with the
// published key the header names, over "t.body".
func verify(t *testing.T, keys []ports.JWK, req ports.WebhookRequest) {
	t.Helper()
	m := signatureHeader.FindStringSubmatch(req.Headers["Webhook-Signature"])
	if m == nil {
		t.Fatalf("signature header %q", req.Headers["Webhook-Signature"])
	}
	var pub ed25519.PublicKey
	for _, k := range keys {
		if k.Kid == m[2] {
			pub, _ = base64.RawURLEncoding.DecodeString(k.X)
		}
	}
	sig, _ := base64.RawURLEncoding.DecodeString(m[3])
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, append([]byte(m[1]+"."), req.Body...), sig) {
		t.Fatalf("signature does not verify with the published key %s", m[2])
	}
	if req.Headers["Content-Type"] != "application/json" {
		t.Errorf("Content-Type %q", req.Headers["Content-Type"])
	}
}

func TestWebhookIsSignedWithThePublishedKey(t *testing.T) {
	p := startOne(t)
	p.put("s1", webhookSpec("events/*"))
	p.createStream("events/a", "text/plain", "1")
	p.tick()
	keys, err := p.subs.JWKS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req, d := p.sender.last(t)
	verify(t, keys, req)
	if req.URL != "http://127.0.0.1:9/hook" || d.Generation != 1 || d.WakeID == "" || d.CallbackToken == "" {
		t.Fatalf("delivery %s: %+v", req.URL, d)
	}
	ts, _ := strconv.ParseInt(signatureHeader.FindStringSubmatch(req.Headers["Webhook-Signature"])[1], 10, 64)
	if ts != p.clock.Now().Unix() {
		t.Errorf("signature time %d, clock %d", ts, p.clock.Now().Unix())
	}
}

func TestSynchronousDoneAcknowledgesTheSnapshot(t *testing.T) {
	p := startOne(t)
	p.sender.answerWith(200, `{"done":true}`, nil)
	p.put("s1", webhookSpec("events/*"))
	p.createStream("events/a", "text/plain", "1", "2")
	p.tick()
	if l := p.linked("s1", "events/a"); l.Acked != 2 || l.Pending {
		t.Fatalf("after done: %+v", l)
	}
	p.tick()
	if p.sender.count() != 1 {
		t.Fatalf("%d deliveries; nothing was pending after done", p.sender.count())
	}
	p.appendTo("events/a", "3")
	p.tick()
	if _, d := p.sender.last(t); p.sender.count() != 2 || d.Generation != 2 {
		t.Fatalf("next wake: %d deliveries, %+v", p.sender.count(), d)
	}
}

func TestCallbackAcknowledgesAndFencesStaleWakes(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.put("s1", webhookSpec("events/*"))
	p.createStream("events/a", "text/plain", "1")
	p.tick()
	_, d := p.sender.last(t)
	ack := ports.WakeAck{WakeID: d.WakeID, Generation: d.Generation, Acks: []ports.StreamAck{{Path: "events/a", Offset: 1}}}
	_, err := p.subs.Callback(ctx, ref("s1"), "forged", ack)
	wantKind(t, err, ports.ErrTokenInvalid)
	stale := ack
	stale.Generation--
	_, err = p.subs.Callback(ctx, ref("s1"), d.CallbackToken, stale)
	wantKind(t, err, ports.ErrFenced)
	beyond := ack
	beyond.Acks = []ports.StreamAck{{Path: "events/a", Offset: 2}}
	_, err = p.subs.Callback(ctx, ref("s1"), d.CallbackToken, beyond)
	wantKind(t, err, ports.ErrInvalidOffset)

	// Without done: a heartbeat that also moves the cursor.
	if next, err := p.subs.Callback(ctx, ref("s1"), d.CallbackToken, ack); err != nil || next {
		t.Fatalf("heartbeat: next=%v %v", next, err)
	}
	if l := p.linked("s1", "events/a"); l.Acked != 1 {
		t.Fatalf("acked %d", l.Acked)
	}
	ack.Done = true
	if next, err := p.subs.Callback(ctx, ref("s1"), d.CallbackToken, ack); err != nil || next {
		t.Fatalf("done: next=%v %v", next, err)
	}
	_, err = p.subs.Callback(ctx, ref("s1"), d.CallbackToken, ack)
	wantKind(t, err, ports.ErrFenced)
	_, err = p.subs.Ack(ctx, ref("s1"), d.CallbackToken, ack)
	wantKind(t, err, ports.ErrInvalidSubscription)
}

func TestDoneWithWorkLeftStartsTheNextWake(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.put("s1", webhookSpec("events/*"))
	p.createStream("events/a", "text/plain", "1")
	p.tick()
	_, d := p.sender.last(t)
	p.appendTo("events/a", "2")
	next, err := p.subs.Callback(ctx, ref("s1"), d.CallbackToken,
		ports.WakeAck{WakeID: d.WakeID, Generation: d.Generation, Acks: []ports.StreamAck{{Path: "events/a", Offset: 1}}, Done: true})
	if err != nil || !next {
		t.Fatalf("done with a record left: next=%v %v", next, err)
	}
	p.tick()
	if _, d2 := p.sender.last(t); d2.Generation != d.Generation+1 || d2.Streams[0].Acked != "1" || d2.Streams[0].Tail != "2" {
		t.Fatalf("next wake %+v", d2)
	}
}

func TestExpiredLeaseWakesAgain(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.put("s1", webhookSpec("events/*"))
	p.createStream("events/a", "text/plain", "1")
	p.tick()
	_, first := p.sender.last(t)
	p.clock.advance(500 * time.Millisecond)
	p.tick()
	if p.sender.count() != 1 {
		t.Fatal("redelivered within the lease")
	}
	p.clock.advance(time.Second)
	p.tick()
	_, second := p.sender.last(t)
	if p.sender.count() != 2 || second.Generation != first.Generation+1 || second.WakeID == first.WakeID {
		t.Fatalf("after the lease: %d deliveries, %+v", p.sender.count(), second)
	}
	_, err := p.subs.Callback(ctx, ref("s1"), first.CallbackToken, ports.WakeAck{WakeID: first.WakeID, Generation: first.Generation, Done: true})
	wantKind(t, err, ports.ErrFenced)
}

func TestFailedDeliveriesRetryWithBackoff(t *testing.T) {
	p := startOne(t)
	p.sender.answerWith(0, "", errors.New("connection refused"))
	p.put("s1", webhookSpec("events/*"))
	p.createStream("events/a", "text/plain", "1")
	p.tick()
	if !p.get("s1").Failed {
		t.Fatal("status is not failed")
	}
	p.tick()
	if p.sender.count() != 1 {
		t.Fatal("retried before the backoff")
	}
	p.clock.advance(1300 * time.Millisecond) // first retry after 0.8 to 1.2 s
	p.sender.answerWith(500, "", nil)
	p.tick()
	if p.sender.count() != 2 {
		t.Fatalf("%d deliveries after the first backoff", p.sender.count())
	}
	p.clock.advance(1300 * time.Millisecond) // the second waits 1.6 to 2.4 s
	p.tick()
	if p.sender.count() != 2 {
		t.Fatal("the backoff did not grow")
	}
	p.clock.advance(1200 * time.Millisecond)
	p.sender.answerWith(204, "", nil)
	p.tick()
	if p.sender.count() != 3 || p.get("s1").Failed {
		t.Fatalf("%d deliveries, failed=%v after a success", p.sender.count(), p.get("s1").Failed)
	}
	for n := 1; n < 20; n++ {
		if d := retryDelay(n); d < 800*time.Millisecond || d > 72*time.Second {
			t.Fatalf("retry delay %d: %v", n, d)
		}
	}
}

func TestWebhooksNeedASender(t *testing.T) {
	c := newCluster()
	p := c.start(t, 1)
	p.subs.cfg.Webhooks = nil
	_, _, err := p.subs.Put(context.Background(), ref("s1"), webhookSpec("x"))
	wantKind(t, err, ports.ErrInvalidSubscription)
}
