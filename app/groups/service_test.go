package groups

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// twoNodes returns the group services of two nodes sharing one log.
func twoNodes(t *testing.T) (*Service, *Service) {
	t.Helper()
	log := memlog.New()
	node := func(n domain.NodeID) *Service {
		plane, err := meta.Open(context.Background(), meta.Config{Log: log, PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { plane.Close() })
		if r, err := plane.ProposeOne(context.Background(), &domain.RegisterNode{Node: n, Epoch: 1, Address: "http://node", Slots: 1}); err != nil || !r.OK() {
			t.Fatalf("register: %v %v", r, err)
		}
		return New(Config{Plane: plane, By: domain.Proposer{Node: n, Epoch: 1}, Poll: 5 * time.Millisecond})
	}
	return node(1), node(2)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var gerr *domain.GroupError
	if !errors.As(err, &gerr) || gerr.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

type joinResult struct {
	j   ports.GroupJoined
	err error
}

func joinAsync(s *Service, req domain.JoinRequest) chan joinResult {
	ch := make(chan joinResult, 1)
	go func() {
		j, err := s.JoinGroup(context.Background(), "g", req)
		ch <- joinResult{j, err}
	}()
	return ch
}

// Two members on two nodes: the second join waits until the first, told
// by its heartbeat, joins again; the streams are then shared, commits are
// fenced by generation, and either node reads what the other wrote.
func TestGroupAcrossNodes(t *testing.T) {
	ctx := context.Background()
	n1, n2 := twoNodes(t)
	sub := []string{"/a", "/b"}
	a, err := n1.JoinGroup(ctx, "g", domain.JoinRequest{Subscription: sub, SessionTimeoutMs: 5_000})
	if err != nil || a.Generation != 1 || !reflect.DeepEqual(a.Assignment, sub) {
		t.Fatalf("first join: %+v %v", a, err)
	}
	pending := joinAsync(n2, domain.JoinRequest{Subscription: sub, SessionTimeoutMs: 5_000})
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := n1.Heartbeat(ctx, "g", domain.MemberFence{MemberID: a.MemberID, Generation: 1})
		if err != nil {
			wantCode(t, err, "rebalance_in_progress")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second join never began a rebalance")
		}
		time.Sleep(5 * time.Millisecond)
	}
	a2, err := n1.JoinGroup(ctx, "g", domain.JoinRequest{MemberID: a.MemberID, Subscription: sub, SessionTimeoutMs: 5_000})
	if err != nil {
		t.Fatal(err)
	}
	b := <-pending
	if b.err != nil {
		t.Fatal(b.err)
	}
	if a2.Generation != 2 || b.j.Generation != 2 || len(a2.Assignment) != 1 || len(b.j.Assignment) != 1 ||
		a2.Assignment[0] == b.j.Assignment[0] {
		t.Fatalf("after the rebalance: %+v and %+v", a2, b.j)
	}
	fence := domain.MemberFence{MemberID: a.MemberID, Generation: 1}
	wantCode(t, n1.CommitOffsets(ctx, "g", map[string]domain.CommittedOffset{"/a": {Position: 3}}, &fence), "illegal_generation")
	fence.Generation = 2
	if err := n1.CommitOffsets(ctx, "g", map[string]domain.CommittedOffset{"/a": {Position: 3}}, &fence); err != nil {
		t.Fatal(err)
	}
	got, err := n2.FetchOffsets(ctx, "g", nil)
	if err != nil || !reflect.DeepEqual(got, map[string]domain.CommittedOffset{"/a": {Position: 3}}) {
		t.Fatalf("offsets read on the other node: %v %v", got, err)
	}
	d, err := n2.DescribeGroup(ctx, "g")
	if err != nil || d.State != domain.GroupStable || len(d.Members) != 2 {
		t.Fatalf("describe: %+v %v", d, err)
	}
	list, err := n2.ListGroups(ctx)
	if err != nil || !reflect.DeepEqual(list, []ports.GroupSummary{{Name: "g", State: domain.GroupStable}}) {
		t.Fatalf("list: %v %v", list, err)
	}
}

// Members that do not join a rebalance by its deadline are dropped: the
// waiting member settles it and takes every stream, and a dropped member's
// heartbeat learns it is unknown.
func TestGroupDeadlineSettles(t *testing.T) {
	ctx := context.Background()
	n1, n2 := twoNodes(t)
	a, err := n1.JoinGroup(ctx, "g", domain.JoinRequest{Subscription: []string{"/a"}, SessionTimeoutMs: 10_000, RebalanceTimeoutMs: 300})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := n2.JoinGroup(ctx, "g", domain.JoinRequest{Subscription: []string{"/a", "/c"}, SessionTimeoutMs: 10_000, RebalanceTimeoutMs: 300})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("the rebalance settled after %v, before its deadline", waited)
	}
	if !slices.Equal(c.Assignment, []string{"/a", "/c"}) || c.Generation != 2 {
		t.Fatalf("the member left: %+v", c)
	}
	wantCode(t, n1.Heartbeat(ctx, "g", domain.MemberFence{MemberID: a.MemberID, Generation: 1}), "unknown_member")
}

// A member whose session runs out during a rebalance is dropped then, not
// at the rebalance's deadline: the waiting member settles it.
func TestGroupExpiryDuringRebalanceSettles(t *testing.T) {
	n1, n2 := twoNodes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := n1.JoinGroup(ctx, "g", domain.JoinRequest{Subscription: []string{"/a"}, SessionTimeoutMs: 1_000, RebalanceTimeoutMs: 60_000}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, err := n2.JoinGroup(ctx, "g", domain.JoinRequest{Subscription: []string{"/a", "/b"}, SessionTimeoutMs: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > 30*time.Second || !slices.Equal(b.Assignment, []string{"/a", "/b"}) || b.Generation != 2 {
		t.Fatalf("after %v: %+v", waited, b)
	}
}
