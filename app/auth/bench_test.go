package auth

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// countingLog counts every call a plane makes of its metadata log. It
// embeds the interface, so it hides memlog's notifications: the plane then
// learns of rows only by polling (an hour here) or by its own proposals.
type countingLog struct {
	ports.MetaLog
	reads, appends, other atomic.Int64
}

func (l *countingLog) Read(ctx context.Context, after uint64, limit int) ([]ports.Row, error) {
	l.reads.Add(1)
	return l.MetaLog.Read(ctx, after, limit)
}

func (l *countingLog) Append(ctx context.Context, index uint64, payload []byte) error {
	l.appends.Add(1)
	return l.MetaLog.Append(ctx, index, payload)
}

func (l *countingLog) LastIndex(ctx context.Context) (uint64, error) {
	l.other.Add(1)
	return l.MetaLog.LastIndex(ctx)
}

func (l *countingLog) PutSnapshot(ctx context.Context, s ports.Snapshot) error {
	l.other.Add(1)
	return l.MetaLog.PutSnapshot(ctx, s)
}

func (l *countingLog) Snapshot(ctx context.Context) (ports.Snapshot, error) {
	l.other.Add(1)
	return l.MetaLog.Snapshot(ctx)
}

func (l *countingLog) Truncate(ctx context.Context, through uint64) error {
	l.other.Add(1)
	return l.MetaLog.Truncate(ctx, through)
}

type logCalls struct{ reads, appends, other int64 }

func (l *countingLog) calls() logCalls {
	return logCalls{l.reads.Load(), l.appends.Load(), l.other.Load()}
}

// settle waits until the plane's background calls of l stop.
func (l *countingLog) settle(t testing.TB) logCalls {
	t.Helper()
	last := l.calls()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		now := l.calls()
		if now == last {
			return now
		}
		last = now
	}
	t.Fatalf("the plane keeps calling its log: %+v", last)
	return last
}

// benchTokens is how many token records the benchmark state holds.
const benchTokens = 300

// authFixture is one node over a counting log with a root token, a scoped
// token, an anonymous record and benchTokens other records.
type authFixture struct {
	log    *countingLog
	svc    *Service
	root   string
	scoped string
}

var scopedStreams = domain.Matchers{prefix("/a/"), prefix("/b/"), prefix("/c/"), prefix("/d/"), exact("/e")}

func newAuthFixture(t testing.TB) *authFixture {
	t.Helper()
	log := &countingLog{MetaLog: memlog.New()}
	c := newClock()
	n := openNode(t, log, 1, c, time.Hour)
	if err := n.svc.Bootstrap(context.Background(), rootWire()); err != nil {
		t.Fatal(err)
	}
	root := mustAuthz(t, n.svc, rootWire(), domain.OpIssueToken, domain.AudienceAdmin, "")
	for i := range benchTokens {
		mustIssue(t, n.svc, root, fmt.Sprintf("token-%04d", i), domain.Scope{Streams: domain.Matchers{prefix(fmt.Sprintf("/t/%d/", i))},
			Groups: groups(domain.GroupStreamRead), Audiences: auds(domain.AudiencePico)})
	}
	scoped := mustIssue(t, n.svc, root, "scoped", domain.Scope{Streams: scopedStreams,
		Groups: groups(domain.GroupStreamRead), Ops: opBits(domain.OpAppend), Audiences: auds(domain.AudiencePico, domain.AudienceDurableStreams),
		Expires: true, ExpiresAtMs: c.nowMs() + time.Hour.Milliseconds()})
	mustIssue(t, n.svc, root, domain.AnonymousTokenID, domain.Scope{Streams: domain.Matchers{prefix("/public/")},
		Groups: groups(domain.GroupStreamRead), Audiences: auds(domain.AudiencePico)})
	return &authFixture{log: log, svc: n.svc, root: rootWire(), scoped: scoped}
}

func (f *authFixture) requests() []struct {
	name string
	req  ports.AuthRequest
	want error
} {
	return []struct {
		name string
		req  ports.AuthRequest
		want error
	}{
		{"root", ports.AuthRequest{Authorization: bearer(f.root), Op: domain.OpAppend, Audience: domain.AudiencePico, Resource: "/orders/2024"}, nil},
		{"scoped", ports.AuthRequest{Authorization: bearer(f.scoped), Op: domain.OpRead, Audience: domain.AudienceDurableStreams, Resource: "/d/x/y"}, nil},
		{"anonymous", ports.AuthRequest{Op: domain.OpRead, Audience: domain.AudiencePico, Resource: "/public/news"}, nil},
		{"forbidden", ports.AuthRequest{Authorization: bearer(f.scoped), Op: domain.OpRead, Audience: domain.AudiencePico, Resource: "/z/x"}, ports.ErrForbidden},
	}
}

func BenchmarkAuthorize(b *testing.B) {
	f := newAuthFixture(b)
	for _, c := range f.requests() {
		b.Run(c.name, func(b *testing.B) {
			if _, err := f.svc.Authorize(c.req); (err == nil) != (c.want == nil) {
				b.Fatalf("authorize: %v, want %v", err, c.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = f.svc.Authorize(c.req)
			}
		})
	}
}

// TestAuthorizeRunsNoQuery: Authorize reads the applied view only; the
// metadata log sees no call for 10,000 of them.
func TestAuthorizeRunsNoQuery(t *testing.T) {
	f := newAuthFixture(t)
	reqs := f.requests()
	before := f.log.settle(t)
	if before.appends == 0 || before.reads == 0 {
		t.Fatalf("the counting log saw no calls while the fixture was built: %+v", before)
	}

	// The loop, then an idle control over the same wall time.
	start := time.Now()
	for i := range 10_000 {
		c := reqs[i%len(reqs)]
		g, err := f.svc.Authorize(c.req)
		switch {
		case c.want == nil && err != nil:
			t.Fatalf("%s: %v", c.name, err)
		case c.want != nil && (err == nil || !errors.Is(err, c.want)):
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		case c.want == nil && g.TokenID == "":
			t.Fatalf("%s: an empty grant", c.name)
		}
	}
	took := time.Since(start)
	after := f.log.calls()
	time.Sleep(took)
	idle := f.log.calls()
	if idle != after {
		t.Fatalf("the plane called its log while idle (%+v -> %+v): the count cannot tell", after, idle)
	}
	if after != before {
		t.Fatalf("10,000 Authorize calls made metadata-log calls: %+v -> %+v", before, after)
	}

	// The counter does count: a proposal is seen.
	if _, err := f.svc.Issue(context.Background(), mustAuthz(t, f.svc, f.root, domain.OpIssueToken, domain.AudienceAdmin, ""), "one-more",
		domain.Scope{Streams: domain.Matchers{prefix("/")}, Groups: groups(domain.GroupStreamRead), Audiences: auds(domain.AudiencePico)}); err != nil {
		t.Fatal(err)
	}
	if got := f.log.calls(); got.appends != after.appends+1 {
		t.Fatalf("an issue made %d appends, want 1", got.appends-after.appends)
	}
}
