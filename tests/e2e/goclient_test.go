package e2e

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picoclient"
)

// TestGoClientProducerSurvivesNodeRestarts runs the Go client's Producer
// and a Subscribe against a node that is killed with SIGKILL and later
// stopped with SIGTERM, restarting each time on the same address. Every
// record the producer was given must end up in the stream once, in order,
// and the subscriber must see exactly that sequence.
func TestGoClientProducerSurvivesNodeRestarts(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	const name, total = "/goclient/events", 3000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := picoclient.New(n.URL, picoclient.Options{Timeout: 10 * time.Second})
	if _, err := c.Create(ctx, name, picoclient.CreateOptions{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}

	var seen []string
	subscribed := make(chan error, 1)
	go func() {
		for rec, err := range c.Subscribe(ctx, name, picoclient.SubscribeOptions{MaxBackoff: 200 * time.Millisecond}) {
			if err != nil {
				subscribed <- err
				return
			}
			seen = append(seen, string(rec.Body))
		}
		subscribed <- nil
	}()

	p := c.NewProducer(name, picoclient.ProducerOptions{ID: "restart-test", MaxBatchRecords: 20,
		MaxInFlight: 4, MaxBackoff: 200 * time.Millisecond})
	var mu sync.Mutex
	acked := 0
	restarts := map[int]syscall.Signal{total / 3: syscall.SIGKILL, 2 * total / 3: syscall.SIGTERM}
	var ackedAt []int
	for i := range total {
		if sig, ok := restarts[i]; ok {
			n.Stop(t, sig)
			mu.Lock()
			ackedAt = append(ackedAt, acked)
			mu.Unlock()
			n = n.restart(t)
		}
		ack, err := p.Append(ctx, picoclient.Record{Body: fmt.Appendf(nil, "e%05d", i)})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		go func() {
			if ack.Wait(ctx) == nil {
				mu.Lock()
				acked++
				mu.Unlock()
			}
		}()
		if i%50 == 0 {
			time.Sleep(2 * time.Millisecond) // spread the records over the restarts
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatalf("producer close: %v", err)
	}
	if _, err := c.CloseStream(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := <-subscribed; err != nil {
		t.Fatalf("subscription ended with %v", err)
	}

	var stored []string
	for rec, err := range c.Read(ctx, name, 0) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, string(rec.Body))
	}
	for what, got := range map[string][]string{"stream": stored, "subscriber": seen} {
		if len(got) != total {
			t.Errorf("%s holds %d records, want %d", what, len(got), total)
		}
		for i := range min(len(got), total) {
			if want := fmt.Sprintf("e%05d", i); got[i] != want {
				t.Fatalf("%s record %d is %q, want %q (lost, repeated or out of order)", what, i, got[i], want)
			}
		}
	}
	t.Logf("%d records, %d acknowledged before the SIGKILL and %d before the SIGTERM", total, ackedAt[0], ackedAt[1])
}

// TestGoClientSubscribeFromNow: a subscription from the tail delivers only
// records appended after it started, even with a Seq beyond the tail.
func TestGoClientSubscribeFromNow(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	const name = "/goclient/now"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := picoclient.New(n.URL, picoclient.Options{})
	if _, err := c.Create(ctx, name, picoclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := c.Append(ctx, name, []picoclient.Record{{Body: fmt.Appendf(nil, "old%d", i)}}, picoclient.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan picoclient.Record, 2)
	go func() {
		for rec, err := range c.Subscribe(ctx, name, picoclient.SubscribeOptions{Now: true, Seq: 1000}) {
			if err != nil {
				return
			}
			got <- rec
		}
	}()
	for i, body := range []string{"new0", "new1"} {
		time.Sleep(200 * time.Millisecond) // the long poll is parked at the tail
		if _, err := c.Append(ctx, name, []picoclient.Record{{Body: []byte(body)}}, picoclient.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case rec := <-got:
			if rec.Seq != uint64(10+i) || string(rec.Body) != body {
				t.Fatalf("record %d from now: seq %d %q, want seq %d %q", i, rec.Seq, rec.Body, 10+i, body)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the subscription from now did not deliver %q", body)
		}
	}
}
