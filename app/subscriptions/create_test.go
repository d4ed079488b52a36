package subscriptions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

func TestPutIsIdempotentByConfiguration(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	spec := webhookSpec("/events/*/")
	spec.Description = "orders"
	sub := p.put("s1", spec)
	if sub.Pattern != "events/*" || sub.Signing == nil || !strings.HasPrefix(sub.Signing.KeyID, "ds_") ||
		sub.Signing.JWKSURL != "http://server/v1/stream/__ds/jwks.json" || sub.LeaseTTL != time.Second {
		t.Fatalf("created: %+v signing %+v", sub, sub.Signing)
	}
	again := spec
	again.Pattern = "events/*"              // the same once normalised
	again.ControlURL = "http://other/__ds/" // not part of the configuration
	if _, created, err := p.subs.Put(ctx, ref("s1"), again); err != nil || created {
		t.Fatalf("same configuration: created=%v %v", created, err)
	}
	again.Description = "payments"
	_, _, err := p.subs.Put(ctx, ref("s1"), again)
	wantKind(t, err, ports.ErrSubscriptionExists)
	if got := p.get("s1"); got.Description != "orders" || got.Type != ports.WebhookSubscription {
		t.Fatalf("after a conflict: %+v", got)
	}
	keys, err := p.subs.JWKS(ctx)
	if err != nil || len(keys) != 1 || keys[0].Kid != sub.Signing.KeyID || keys[0].Kty != "OKP" || keys[0].Crv != "Ed25519" ||
		keys[0].Alg != "EdDSA" || keys[0].Use != "sig" || keys[0].X == "" {
		t.Fatalf("JWKS %+v %v", keys, err)
	}
}

func TestPutRejectsBadConfigurations(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	cases := map[string]struct {
		edit func(*ports.SubscriptionSpec)
		kind error
	}{
		"private webhook":  {func(s *ports.SubscriptionSpec) { s.WebhookURL = "http://10.0.0.1/hook" }, ports.ErrWebhookURLRejected},
		"metadata webhook": {func(s *ports.SubscriptionSpec) { s.WebhookURL = "https://169.254.169.254/x" }, ports.ErrWebhookURLRejected},
		"plain http":       {func(s *ports.SubscriptionSpec) { s.WebhookURL = "http://example.com/hook" }, ports.ErrWebhookURLRejected},
		"no webhook url":   {func(s *ports.SubscriptionSpec) { s.WebhookURL = "" }, ports.ErrInvalidSubscription},
		"nothing linked":   {func(s *ports.SubscriptionSpec) { s.Pattern = "" }, ports.ErrInvalidSubscription},
		"short lease":      {func(s *ports.SubscriptionSpec) { s.LeaseTTL = 999 * time.Millisecond }, ports.ErrInvalidSubscription},
		"long lease":       {func(s *ports.SubscriptionSpec) { s.LeaseTTL = 11 * time.Minute }, ports.ErrInvalidSubscription},
		"unknown type":     {func(s *ports.SubscriptionSpec) { s.Type = "email" }, ports.ErrInvalidSubscription},
		"reserved stream":  {func(s *ports.SubscriptionSpec) { s.Streams = []string{"__ds/x"} }, ports.ErrInvalidSubscription},
	}
	for name, c := range cases {
		spec := webhookSpec("events/*")
		c.edit(&spec)
		_, _, err := p.subs.Put(ctx, ref("bad"), spec)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		wantKind(t, err, c.kind)
	}
	_, _, err := p.subs.Put(ctx, ref("a/b"), webhookSpec("x"))
	wantKind(t, err, ports.ErrInvalidSubscription)
	_, _, err = p.subs.Put(ctx, ref("pull"), pullSpec("x", ""))
	wantKind(t, err, ports.ErrInvalidSubscription)
	_, err = p.subs.Get(ctx, ref("bad"))
	wantKind(t, err, ports.ErrSubscriptionNotFound)
}

func TestPatternLinksExistingStreamsAtTheirTail(t *testing.T) {
	p := startOne(t)
	p.createStream("events/a", "text/plain", "1", "2")
	p.createStream("events/a/deeper", "text/plain", "1")
	p.createStream("other/b", "text/plain", "1")
	p.put("s1", webhookSpec("events/*"))
	sub := p.get("s1")
	if len(sub.Streams) != 1 || sub.Streams[0] != (ports.LinkedStream{Path: "events/a", Acked: 2, Tail: 2}) {
		t.Fatalf("links %+v", sub.Streams)
	}
	p.tick()
	if p.sender.count() != 0 {
		t.Fatal("history was delivered: a new subscription starts at the tail")
	}
	p.appendTo("events/a", "3")
	p.tick()
	_, d := p.sender.last(t)
	if len(d.Streams) != 1 || d.Streams[0].Acked != "2" || d.Streams[0].Tail != "3" || !d.Streams[0].HasPending ||
		d.Streams[0].LinkType != "glob" {
		t.Fatalf("wake after an append: %+v", d)
	}
}

func TestStreamsCreatedLaterAreLinkedFromTheirStart(t *testing.T) {
	p := startOne(t)
	p.put("s1", webhookSpec("events/**"))
	p.createStream("events/x/y", "text/plain", "first")
	p.createStream("elsewhere", "text/plain", "first")
	p.tick()
	_, d := p.sender.last(t)
	if d.SubscriptionID != "s1" || len(d.Streams) != 1 || d.Streams[0].Path != "events/x/y" || d.Streams[0].Acked != "0" ||
		d.Streams[0].Tail != "1" || d.CallbackURL != "http://server/v1/stream/__ds/subscriptions/s1/callback" {
		t.Fatalf("wake for a new stream: %+v", d)
	}
}

func TestExplicitStreamsAddAndRemove(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.createStream("manual/b", "text/plain", "1")
	p.put("s1", webhookSpec("auto/*", "manual/a"))
	if err := p.subs.AddStreams(ctx, ref("s1"), []string{"manual/b", "auto/c"}); err != nil {
		t.Fatal(err)
	}
	if l := p.linked("s1", "manual/b"); !l.Explicit || l.Acked != 1 {
		t.Fatalf("added at the tail: %+v", l)
	}
	for _, path := range []string{"manual/b", "auto/c", "never/linked"} {
		if err := p.subs.RemoveStream(ctx, ref("s1"), path); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{}
	for _, ls := range p.get("s1").Streams {
		paths = append(paths, ls.Path+":"+map[bool]string{true: "explicit", false: "glob"}[ls.Explicit])
	}
	if strings.Join(paths, " ") != "auto/c:glob manual/a:explicit" {
		t.Fatalf("links after removals: %v (a link through the pattern survives)", paths)
	}
	wantKind(t, p.subs.AddStreams(ctx, ref("none"), []string{"x"}), ports.ErrSubscriptionNotFound)
}

func TestDeleteTombstonesAndKeepsTheGeneration(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.createStream("wake", "application/json")
	p.put("s1", pullSpec("events/*", "wake"))
	p.createStream("events/a", "text/plain", "1")
	claim, err := p.subs.Claim(ctx, ref("s1"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.subs.Delete(ctx, ref("s1")); err != nil {
		t.Fatal(err)
	}
	if err := p.subs.Delete(ctx, ref("s1")); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
	_, err = p.subs.Ack(ctx, ref("s1"), claim.Token, ports.WakeAck{WakeID: claim.WakeID, Generation: claim.Generation, Done: true})
	wantKind(t, err, ports.ErrSubscriptionNotFound)
	_, err = p.subs.Get(ctx, ref("s1"))
	wantKind(t, err, ports.ErrSubscriptionNotFound)
	p.put("s1", pullSpec("events/*", "wake"))
	p.appendTo("events/a", "2")
	again, err := p.subs.Claim(ctx, ref("s1"), "w1")
	if err != nil || again.Generation <= claim.Generation {
		t.Fatalf("claim after re-creation: %+v %v (generations continue)", again, err)
	}
}

func TestTombstonesArePurgedLater(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.put("s1", webhookSpec("x"))
	if err := p.subs.Delete(ctx, ref("s1")); err != nil {
		t.Fatal(err)
	}
	p.tick()
	v := p.subs.cfg.Plane.View()
	if len(subscriptionKeys(&v)) != 1 {
		t.Fatal("tombstone purged at once")
	}
	p.clock.advance(tombstoneKeep + time.Second)
	p.tick()
	v = p.subs.cfg.Plane.View()
	if keys := subscriptionKeys(&v); len(keys) != 0 {
		t.Fatalf("tombstone kept: %v", keys)
	}
}
