package subscriptions

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/app/streams"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

const root = "/v1/stream/"

// clock is a settable test clock.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(1_700_000_000_000)
	return c
}

func (c *clock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// fakeSender records webhook deliveries and answers with what it is told.
type fakeSender struct {
	mu     sync.Mutex
	sent   []ports.WebhookRequest
	answer ports.WebhookResponse
	err    error
}

func (f *fakeSender) Send(_ context.Context, req ports.WebhookRequest) (ports.WebhookResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, req)
	return f.answer, f.err
}

// Policy allows loopback: the tests' webhooks go to 127.0.0.1.
func (f *fakeSender) Policy() ports.WebhookPolicy { return ports.WebhookPolicy{AllowLoopback: true} }

func (f *fakeSender) answerWith(status int, body string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer, f.err = ports.WebhookResponse{Status: status, Body: []byte(body)}, err
}

func (f *fakeSender) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

// last decodes the newest delivery's body.
func (f *fakeSender) last(t *testing.T) (ports.WebhookRequest, delivery) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sent) == 0 {
		t.Fatal("no webhook was sent")
	}
	req := f.sent[len(f.sent)-1]
	var d delivery
	if err := json.Unmarshal(req.Body, &d); err != nil {
		t.Fatalf("webhook body %s: %v", req.Body, err)
	}
	return req, d
}

// delivery is a webhook body as a receiver reads it.
type delivery struct {
	SubscriptionID string `json:"subscription_id"`
	WakeID         string `json:"wake_id"`
	Generation     uint64 `json:"generation"`
	Streams        []struct {
		Path       string `json:"path"`
		LinkType   string `json:"link_type"`
		Acked      string `json:"acked_offset"`
		Tail       string `json:"tail_offset"`
		HasPending bool   `json:"has_pending"`
	} `json:"streams"`
	CallbackURL   string `json:"callback_url"`
	CallbackToken string `json:"callback_token"`
}

// process is one node process: plane, engine, stream service and the
// subscription service under test.
type process struct {
	t       *testing.T
	subs    *Service
	streams *streams.Service
	sender  *fakeSender
	clock   *clock
	stop    func()
}

type cluster struct {
	log   ports.MetaLog
	store ports.ObjectStore
	clock *clock
}

func newCluster() *cluster {
	return &cluster{log: memlog.New(), store: memstore.New(), clock: newClock()}
}

// start runs a process of node 1 at epoch (a higher epoch is a restart).
func (c *cluster) start(t *testing.T, epoch uint64) *process {
	t.Helper()
	ctx := context.Background()
	plane, err := meta.Open(ctx, meta.Config{Log: c.log, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := plane.ProposeOne(ctx, &domain.RegisterNode{Node: 1, Epoch: epoch, Address: "http://node1", Slots: 1}); err != nil || !r.OK() {
		t.Fatalf("register: %v %v", r, err)
	}
	by := domain.Proposer{Node: 1, Epoch: epoch}
	w := wal.Open(wal.Config{Store: c.store, Node: 1, Epoch: epoch, RetryFor: time.Second})
	eng := engine.New(engine.Config{Plane: plane, By: by, Store: c.store, WAL: w, Now: c.clock.Now})
	svc := streams.New(streams.Config{Plane: plane, Engine: eng, By: by, Address: "http://node1", Now: c.clock.Now})
	sender := &fakeSender{answer: ports.WebhookResponse{Status: 200, Body: []byte("{}")}}
	subs := New(Config{Plane: plane, By: by, Streams: svc, Webhooks: sender, Now: c.clock.Now,
		Logger: slog.New(slog.DiscardHandler)})
	stopped := false
	p := &process{t: t, subs: subs, streams: svc, sender: sender, clock: c.clock}
	p.stop = func() {
		if !stopped {
			stopped = true
			_ = eng.CloseAll(ctx)
			w.Close()
			plane.Close()
		}
	}
	t.Cleanup(p.stop)
	return p
}

func startOne(t *testing.T) *process { return newCluster().start(t, 1) }

// tick runs one delivery pass and waits for its webhooks' outcomes.
func (p *process) tick() {
	p.subs.tick(context.Background())
	p.subs.sends.Wait()
}

func (p *process) createStream(name, contentType string, bodies ...string) {
	p.t.Helper()
	recs := make([]domain.Record, len(bodies))
	for i, b := range bodies {
		recs[i] = domain.Record{Body: []byte(b)}
	}
	if _, _, err := p.streams.Create(context.Background(), root+name, domain.StreamConfig{ContentType: contentType}, recs, false); err != nil {
		p.t.Fatalf("create %s: %v", name, err)
	}
}

func (p *process) appendTo(name string, bodies ...string) uint64 {
	p.t.Helper()
	recs := make([]domain.Record, len(bodies))
	for i, b := range bodies {
		recs[i] = domain.Record{Body: []byte(b)}
	}
	r, err := p.streams.Append(context.Background(), root+name, ports.AppendRequest{Records: recs})
	if err != nil {
		p.t.Fatalf("append to %s: %v", name, err)
	}
	return r.Next
}

func (p *process) records(name string) []string {
	p.t.Helper()
	page, err := p.streams.Read(context.Background(), root+name, 0, ports.ReadLimits{})
	if err != nil {
		p.t.Fatalf("read %s: %v", name, err)
	}
	out := make([]string, len(page.Records))
	for i, r := range page.Records {
		out[i] = string(r.Body)
	}
	return out
}

func ref(id string) ports.SubscriptionRef { return ports.SubscriptionRef{Root: root, ID: id} }

func webhookSpec(pattern string, streams ...string) ports.SubscriptionSpec {
	return ports.SubscriptionSpec{Type: ports.WebhookSubscription, Pattern: pattern, Streams: streams,
		WebhookURL: "http://127.0.0.1:9/hook", LeaseTTL: time.Second, ControlURL: "http://server/v1/stream/__ds/"}
}

func pullSpec(pattern, wakeStream string) ports.SubscriptionSpec {
	return ports.SubscriptionSpec{Type: ports.PullWakeSubscription, Pattern: pattern, WakeStream: wakeStream, LeaseTTL: time.Second}
}

func (p *process) put(id string, spec ports.SubscriptionSpec) ports.Subscription {
	p.t.Helper()
	sub, created, err := p.subs.Put(context.Background(), ref(id), spec)
	if err != nil || !created {
		p.t.Fatalf("put %s: created=%v %v", id, created, err)
	}
	return sub
}

func (p *process) get(id string) ports.Subscription {
	p.t.Helper()
	sub, err := p.subs.Get(context.Background(), ref(id))
	if err != nil {
		p.t.Fatalf("get %s: %v", id, err)
	}
	return sub
}

// linked returns a subscription's link to path.
func (p *process) linked(id, path string) ports.LinkedStream {
	p.t.Helper()
	for _, ls := range p.get(id).Streams {
		if ls.Path == path {
			return ls
		}
	}
	p.t.Fatalf("%s is not linked to %s", path, id)
	return ports.LinkedStream{}
}

func wantKind(t *testing.T, err, kind error) *ports.SubscriptionError {
	t.Helper()
	var se *ports.SubscriptionError
	if !errors.As(err, &se) || !errors.Is(err, kind) {
		t.Fatalf("got %v, want a SubscriptionError of kind %v", err, kind)
	}
	return se
}
