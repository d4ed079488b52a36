package subscriptions

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// wakeRecords decodes the wake stream's records.
func (p *process) wakeRecords(name string) []map[string]any {
	p.t.Helper()
	var out []map[string]any
	for _, body := range p.records(name) {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			p.t.Fatalf("wake record %s: %v", body, err)
		}
		out = append(out, m)
	}
	return out
}

func TestPullWakeClaimAckAndRelease(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.createStream("wake", "application/json")
	p.put("pull", pullSpec("events/*", "wake"))
	p.createStream("events/a", "application/json", `{"event":"created"}`)
	p.tick()
	wakes := p.wakeRecords("wake")
	if len(wakes) != 1 || wakes[0]["type"] != "wake" || wakes[0]["subscription_id"] != "pull" ||
		wakes[0]["stream"] != "events/a" || wakes[0]["generation"] != 1.0 {
		t.Fatalf("wake records %v", wakes)
	}
	p.tick()
	if len(p.wakeRecords("wake")) != 1 {
		t.Fatal("a wake was announced twice")
	}

	claim, err := p.subs.Claim(ctx, ref("pull"), "worker-1")
	if err != nil || claim.Generation != 1 || claim.Token == "" || len(claim.Streams) != 1 || claim.Streams[0].Tail != 1 ||
		!claim.Streams[0].Pending || claim.LeaseTTL != time.Second {
		t.Fatalf("claim %+v %v", claim, err)
	}
	_, err = p.subs.Claim(ctx, ref("pull"), "worker-2")
	if se := wantKind(t, err, ports.ErrAlreadyClaimed); se.Holder != "worker-1" || se.Generation != 1 {
		t.Fatalf("busy: %+v", se)
	}
	next, err := p.subs.Ack(ctx, ref("pull"), claim.Token, ports.WakeAck{WakeID: claim.WakeID, Generation: claim.Generation,
		Acks: []ports.StreamAck{{Path: "events/a", Offset: 1}}, Done: true})
	if err != nil || next {
		t.Fatalf("ack done: next=%v %v", next, err)
	}
	_, err = p.subs.Claim(ctx, ref("pull"), "worker-2")
	wantKind(t, err, ports.ErrNoPendingWork)

	p.appendTo("events/a", `{"event":"second"}`)
	claim2, err := p.subs.Claim(ctx, ref("pull"), "worker-1")
	if err != nil || claim2.Generation != 2 {
		t.Fatalf("claim right after an append: %+v %v", claim2, err)
	}
	if err := p.subs.Release(ctx, ref("pull"), claim2.Token, claim2.WakeID, claim2.Generation); err != nil {
		t.Fatal(err)
	}
	wantKind(t, p.subs.Release(ctx, ref("pull"), claim2.Token, claim2.WakeID, claim2.Generation), ports.ErrFenced)
	p.tick()
	if wakes := p.wakeRecords("wake"); len(wakes) != 2 || wakes[1]["generation"] != 3.0 {
		t.Fatalf("work left after a release is announced again: %v", wakes)
	}
}

func TestAckWithoutDoneRenewsTheLease(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.createStream("wake", "application/json")
	p.put("pull", pullSpec("events/*", "wake"))
	p.createStream("events/a", "text/plain", "1", "2")
	claim, err := p.subs.Claim(ctx, ref("pull"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	beat := ports.WakeAck{WakeID: claim.WakeID, Generation: claim.Generation, Acks: []ports.StreamAck{{Path: "events/a", Offset: 1}}}
	for range 3 {
		p.clock.advance(800 * time.Millisecond)
		if _, err := p.subs.Ack(ctx, ref("pull"), claim.Token, beat); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
	}
	_, err = p.subs.Ack(ctx, ref("pull"), claim.Token, ports.WakeAck{WakeID: claim.WakeID, Generation: claim.Generation,
		Acks: []ports.StreamAck{{Path: "events/a", Offset: 0}}})
	wantKind(t, err, ports.ErrInvalidOffset)
	p.clock.advance(1500 * time.Millisecond)
	_, err = p.subs.Ack(ctx, ref("pull"), claim.Token, beat)
	wantKind(t, err, ports.ErrTokenExpired)
}

func TestExpiredClaimGoesToTheNextWorker(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.createStream("wake", "application/json")
	p.put("pull", pullSpec("events/*", "wake"))
	p.createStream("events/a", "text/plain", "1")
	first, err := p.subs.Claim(ctx, ref("pull"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	p.clock.advance(1500 * time.Millisecond)
	p.tick() // the lease ran out with work pending: a new wake
	if wakes := p.wakeRecords("wake"); len(wakes) != 1 || wakes[0]["generation"] != 2.0 {
		t.Fatalf("re-wake after the lease: %v", wakes)
	}
	second, err := p.subs.Claim(ctx, ref("pull"), "w2")
	if err != nil || second.Generation != 2 {
		t.Fatalf("claim after expiry: %+v %v", second, err)
	}
	_, err = p.subs.Ack(ctx, ref("pull"), first.Token, ports.WakeAck{WakeID: first.WakeID, Generation: first.Generation, Done: true})
	wantKind(t, err, ports.ErrFenced)
}

func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	p, ctx := startOne(t), context.Background()
	p.createStream("wake", "application/json")
	p.put("pull", pullSpec("events/*", "wake"))
	p.createStream("events/a", "text/plain", "1")
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.subs.Claim(ctx, ref("pull"), "w"+string(rune('0'+i)))
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		if err == nil {
			won++
		} else {
			wantKind(t, err, ports.ErrAlreadyClaimed)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won", won)
	}
}

func TestStateSurvivesARestart(t *testing.T) {
	c := newCluster()
	p := c.start(t, 1)
	ctx := context.Background()
	p.createStream("wake", "application/json")
	p.put("pull", pullSpec("events/*", "wake"))
	p.put("hook", webhookSpec("hooks/*"))
	p.createStream("events/a", "text/plain", "1", "2")
	claim, err := p.subs.Claim(ctx, ref("pull"), "w1")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := p.subs.JWKS(ctx)
	p.stop()

	q := c.start(t, 2)
	if l := q.linked("pull", "events/a"); l.Tail != 2 || l.Acked != 0 {
		t.Fatalf("link after restart: %+v", l)
	}
	if _, err := q.subs.Claim(ctx, ref("pull"), "w2"); err == nil {
		t.Fatal("the claim was lost in the restart")
	}
	if next, err := q.subs.Ack(ctx, ref("pull"), claim.Token, ports.WakeAck{WakeID: claim.WakeID, Generation: claim.Generation,
		Acks: []ports.StreamAck{{Path: "events/a", Offset: 2}}, Done: true}); err != nil || next {
		t.Fatalf("ack with the token issued before the restart: next=%v %v", next, err)
	}
	again, _ := q.subs.JWKS(ctx)
	if len(again) != 1 || again[0] != keys[0] {
		t.Fatalf("signing key changed: %+v then %+v", keys, again)
	}
	q.createStream("hooks/x", "text/plain", "1")
	q.tick()
	req, _ := q.sender.last(t)
	verify(t, keys, req)
}
