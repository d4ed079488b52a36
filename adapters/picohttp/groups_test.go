package picohttp

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// fakeGroups answers every group request from fixed data and records the
// joins and commits it is asked for.
type fakeGroups struct {
	mu      sync.Mutex
	joins   []domain.JoinRequest
	commits []map[string]domain.CommittedOffset
}

func (f *fakeGroups) ListGroups(context.Context) ([]ports.GroupSummary, error) {
	return []ports.GroupSummary{{Name: "g", State: domain.GroupStable}}, nil
}

func (f *fakeGroups) DescribeGroup(_ context.Context, g string) (domain.ConsumerGroup, error) {
	if g != "g" {
		return domain.ConsumerGroup{}, ports.Errorf(ports.ErrGroupNotFound, "no group named %s", g)
	}
	return domain.ConsumerGroup{State: domain.GroupStable, Generation: 1,
		Members: []domain.GroupMember{{ID: "m", ClientID: "pico", Subscription: []string{"/open"}, Assignment: []string{"/open"}}}}, nil
}

func (f *fakeGroups) JoinGroup(_ context.Context, _ string, req domain.JoinRequest) (ports.GroupJoined, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.joins = append(f.joins, req)
	return ports.GroupJoined{MemberID: "m", Generation: 1, Assignment: req.Subscription, Members: []string{"m"}}, nil
}

func (f *fakeGroups) Assignment(_ context.Context, _ string, fence domain.MemberFence) ([]string, error) {
	if fence.Generation != 1 {
		return nil, &domain.GroupError{Code: "illegal_generation", Message: "generation differs"}
	}
	return []string{"/open"}, nil
}

func (f *fakeGroups) Heartbeat(context.Context, string, domain.MemberFence) error { return nil }

func (f *fakeGroups) LeaveGroup(context.Context, string, string, string) error { return nil }

func (f *fakeGroups) Subscription(_ context.Context, _, member string) ([]string, error) {
	if member == "spy" {
		return []string{"/open", "/secret"}, nil
	}
	return []string{"/open"}, nil
}

func (f *fakeGroups) CommitOffsets(_ context.Context, _ string, o map[string]domain.CommittedOffset, _ *domain.MemberFence) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits = append(f.commits, o)
	return nil
}

func (f *fakeGroups) FetchOffsets(context.Context, string, []string) (map[string]domain.CommittedOffset, error) {
	return map[string]domain.CommittedOffset{"/open": {Position: 1}, "/secret": {Position: 2}}, nil
}

// streamAuth allows everything but reading /secret.
type streamAuth struct{ handlertest.RecordingAuth }

func (a *streamAuth) Authorize(req ports.AuthRequest) (ports.Grant, error) {
	g, err := a.RecordingAuth.Authorize(req)
	if err == nil && req.Resource == "/secret" {
		return ports.Grant{}, fmt.Errorf("%w: not /secret", ports.ErrForbidden)
	}
	g.Scope = domain.Scope{Streams: domain.Matchers{{Value: "/open"}}, Groups: 1<<domain.GroupStreamRead | 1<<domain.GroupAdminRead,
		Audiences: 1 << domain.AudiencePico}
	return g, err
}

// Under auth, a group request is refused unless the grant reads every
// stream it names or its member subscribes to, and offsets of streams the
// grant cannot read are not shown.
func TestGroupsCheckEveryStream(t *testing.T) {
	groups := &fakeGroups{}
	h := newHarness(t, func(c *Config) { c.Groups = groups; c.Auth = &streamAuth{} })
	if rec := h.do("POST", "/_groups/g/members", []byte(`{"subscription":["/open"]}`)); rec.Code != 200 {
		t.Fatalf("join of a readable stream: %d %s", rec.Code, rec.Body)
	}
	wantError(t, h.do("POST", "/_groups/g/members", []byte(`{"subscription":["/open","/secret"]}`)), 403, codeForbidden, "not /secret")
	wantError(t, h.do("PUT", "/_groups/g/offsets", []byte(`{"offsets":{"/secret":{"position":1}}}`)), 403, codeForbidden, "")
	wantError(t, h.do("POST", "/_groups/g/members/spy/heartbeat", []byte(`{"generation":1}`)), 403, codeForbidden, "")
	if len(groups.joins) != 1 || len(groups.commits) != 0 {
		t.Fatalf("the service was asked %d joins and %d commits, want 1 and 0", len(groups.joins), len(groups.commits))
	}
	rec := h.do("GET", "/_groups/g/offsets", nil)
	if rec.Code != 200 || rec.Body.String() != `{"offsets":{"/open":{"position":1,"metadata":null}}}` {
		t.Fatalf("offsets: %d %s", rec.Code, rec.Body)
	}
}

func TestGroupErrorsAndRoutes(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Groups = &fakeGroups{} })
	wantError(t, h.do("GET", "/_groups/g/members/m?generation=2", nil), 409, "illegal_generation", "generation differs")
	wantError(t, h.do("GET", "/_groups/other", nil), 404, codeNotFound, "no group named other")
	wantError(t, h.do("GET", "/_groups/g/members/m/elsewhere", nil), 404, codeNotFound, "no such group resource")
	wantError(t, h.do("PATCH", "/_groups/g/offsets", nil), 405, codeMethodNotAllowed, "")
	if rec := h.do("GET", "/_groups", nil); rec.Body.String() != `{"groups":[{"group":"g","state":"Stable"}]}` {
		t.Fatalf("list: %s", rec.Body)
	}
	if rec := h.do("GET", "/_groups/g", nil); rec.Body.String() !=
		`{"group":"g","state":"Stable","generation":1,"members":[{"memberId":"m","instanceId":null,"clientId":"pico","subscription":["/open"],"assignment":["/open"]}]}` {
		t.Fatalf("describe: %s", rec.Body)
	}
	off := newHarness(t)
	wantError(t, off.do("GET", "/_groups", nil), 404, codeNotFound, "no consumer groups")
	// a stream may not be named under the reserved path
	wantError(t, off.do("PUT", "/_groups/x", nil), 404, codeNotFound, "")
}

func TestParseGroupPath(t *testing.T) {
	for rest, want := range map[string]groupPath{
		"":                       {},
		"/":                      {},
		"/g":                     {group: "g"},
		"/a%2Fb/offsets":         {group: "a/b", part: "offsets"},
		"/g/members":             {group: "g", part: "members"},
		"/g/members/m-1":         {group: "g", part: "members", member: "m-1"},
		"/g/members/m/heartbeat": {group: "g", part: "members", member: "m", action: "heartbeat"},
	} {
		if got, ok := parseGroupPath(rest); !ok || got != want {
			t.Errorf("parseGroupPath(%q) = %+v, %v; want %+v", rest, got, ok, want)
		}
	}
	for _, bad := range []string{"//", "/g/", "/g/other", "/g/members/m/x", "/g/members/m/heartbeat/x", "/%zz"} {
		if _, ok := parseGroupPath(bad); ok {
			t.Errorf("parseGroupPath(%q) passed", bad)
		}
	}
}

// FuzzGroupBodies: any body decodes to a join, heartbeat or commit the
// group rules accept, or to a 400; nothing panics.
func FuzzGroupBodies(f *testing.F) {
	for _, s := range []string{`{"subscription":["/a"],"memberId":"m","sessionTimeoutMs":1000}`,
		`{"generation":3,"instanceId":"i"}`, `{"offsets":{"/a":{"position":1,"metadata":"x"}},"memberId":"m","generation":1}`,
		`null`, `{"subscription":null}`, `{"offsets":{"":{"position":1}}}`, `{} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if req, err := decodeJoin(bytes.NewReader(body)); err == nil {
			if _, err := domain.CheckJoin(req); err != nil {
				t.Fatalf("a decoded join fails its check: %v", err)
			}
		} else if !isBadRequest(err) {
			t.Fatalf("join: %v is not a 400", err)
		}
		if _, _, err := decodeHeartbeat(bytes.NewReader(body)); err != nil && !isBadRequest(err) {
			t.Fatalf("heartbeat: %v is not a 400", err)
		}
		offsets, fence, err := decodeCommit(bytes.NewReader(body))
		if err != nil {
			if !isBadRequest(err) {
				t.Fatalf("commit: %v is not a 400", err)
			}
			return
		}
		for s, o := range offsets {
			if domain.CheckOffset(s, o) != nil {
				t.Fatalf("a decoded offset of %q fails its check", s)
			}
		}
		if fence != nil && fence.MemberID == "" && !strings.Contains(string(body), `"memberId"`) {
			t.Fatalf("a fence without a member id from %q", body)
		}
	})
}

// FuzzParseGroupPath: a parsed path's segments are unescaped and none is
// empty.
func FuzzParseGroupPath(f *testing.F) {
	for _, s := range []string{"/g", "/g/members/m/heartbeat", "/a%2F/offsets", "/g/members/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		p, ok := parseGroupPath(rest)
		if !ok || p == (groupPath{}) {
			return
		}
		if p.group == "" || (p.member != "" && p.part != "members") || slices.Contains([]string{p.part, p.action}, "x") {
			t.Fatalf("parseGroupPath(%q) = %+v", rest, p)
		}
	})
}

func isBadRequest(err error) bool {
	pe, ok := err.(*protocolError)
	return ok && pe.status == http.StatusBadRequest
}

// blockingGroups holds every join until its context ends.
type blockingGroups struct{ fakeGroups }

func (b *blockingGroups) JoinGroup(ctx context.Context, _ string, _ domain.JoinRequest) (ports.GroupJoined, error) {
	<-ctx.Done()
	return ports.GroupJoined{}, ports.Errorf(ports.ErrUnavailable, "the join ended before the rebalance: %v", context.Cause(ctx))
}

// A join waiting on its rebalance answers 503 once the server starts
// shutting down, instead of holding the shutdown up.
func TestJoinEndsAtShutdown(t *testing.T) {
	done := make(chan struct{})
	h := newHarness(t, func(c *Config) { c.Groups = &blockingGroups{}; c.Done = done })
	got := make(chan int, 1)
	go func() { got <- h.do("POST", "/_groups/g/members", []byte(`{"subscription":["/a"]}`)).Code }()
	close(done)
	if code := <-got; code != http.StatusServiceUnavailable {
		t.Fatalf("a join at shutdown: %d, want 503", code)
	}
}
