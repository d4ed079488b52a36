package domain

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func join(t *testing.T, g *ConsumerGroup, req JoinRequest, newID string, now int64) (string, uint64) {
	t.Helper()
	req, err := CheckJoin(req)
	if err != nil {
		t.Fatal(err)
	}
	id, round, gerr := g.Join(req, newID, now)
	if gerr != nil {
		t.Fatalf("join %s: %v", newID, gerr)
	}
	return id, round
}

func wantCode(t *testing.T, err *GroupError, code string) {
	t.Helper()
	if err == nil || err.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

// A lone member's join completes at once; a second member's join waits
// until the first joins again, which a heartbeat tells it to do; then the
// streams are shared.
func TestGroupRebalanceWaitsForEveryMember(t *testing.T) {
	var g ConsumerGroup
	a, round := join(t, &g, JoinRequest{Subscription: []string{"/s1", "/s2"}}, "a", 0)
	if g.Settled != round || g.State != GroupStable || g.Generation != 1 {
		t.Fatalf("after one join: %+v", g)
	}
	if m, _ := g.MemberAt(a); !reflect.DeepEqual(m.Assignment, []string{"/s1", "/s2"}) {
		t.Fatalf("assignment %v", m.Assignment)
	}
	b, round := join(t, &g, JoinRequest{Subscription: []string{"/s2", "/s1"}}, "b", 100)
	if g.Settled == round || g.State != GroupPreparing {
		t.Fatalf("the second join settled before the first member joined again: %+v", g)
	}
	wantCode(t, g.Heartbeat(a, "", 1, 200), "rebalance_in_progress")
	if _, again := join(t, &g, JoinRequest{MemberID: a, Subscription: []string{"/s1", "/s2"}}, "unused", 300); again != round {
		t.Fatalf("the rejoin began round %d, want it to join round %d", again, round)
	}
	if g.Settled != round || g.State != GroupStable || g.Generation != 2 {
		t.Fatalf("after both joined: %+v", g)
	}
	ma, _ := g.MemberAt(a)
	mb, _ := g.MemberAt(b)
	if !reflect.DeepEqual(ma.Assignment, []string{"/s1"}) || !reflect.DeepEqual(mb.Assignment, []string{"/s2"}) {
		t.Fatalf("assignments %v and %v, want one stream each", ma.Assignment, mb.Assignment)
	}
	wantCode(t, g.Heartbeat(a, "", 1, 400), "illegal_generation")
	if err := g.Heartbeat(a, "", 2, 400); err != nil {
		t.Fatal(err)
	}
	wantCode(t, g.Fence(b, "", 1, true), "illegal_generation") // a stale member's commit is fenced
	wantCode(t, g.Heartbeat("c", "", 2, 400), "unknown_member")
}

// A member that does not join a rebalance by its deadline is dropped.
func TestGroupRebalanceDeadlineDropsAbsentMembers(t *testing.T) {
	var g ConsumerGroup
	a, _ := join(t, &g, JoinRequest{Subscription: []string{"/s"}, SessionTimeoutMs: 60_000, RebalanceTimeoutMs: 5_000}, "a", 0)
	_, round := join(t, &g, JoinRequest{Subscription: []string{"/s"}}, "b", 1_000)
	if g.Settle(5_999) || g.Settled == round {
		t.Fatal("settled before the deadline")
	}
	if !g.Settle(31_000) || g.Settled != round { // b's rebalance timeout, the longest, from its join
		t.Fatal("not settled at the deadline")
	}
	if _, ok := g.MemberAt(a); ok || len(g.Members) != 1 || g.Generation != 2 {
		t.Fatalf("after the deadline: %+v", g)
	}
}

// Sessions run out; a leave cancels a pending rebalance; the last member
// leaving empties the group and keeps its generation.
func TestGroupExpiryAndLeave(t *testing.T) {
	var g ConsumerGroup
	a, _ := join(t, &g, JoinRequest{Subscription: []string{"/s"}, SessionTimeoutMs: 1_000}, "a", 0)
	b, _ := join(t, &g, JoinRequest{Subscription: []string{"/s"}, SessionTimeoutMs: 10_000}, "b", 0)
	join(t, &g, JoinRequest{MemberID: a, Subscription: []string{"/s"}, SessionTimeoutMs: 1_000}, "", 0)
	if g.State != GroupStable {
		t.Fatalf("%+v", g)
	}
	if !g.Expire(1_000) || len(g.Members) != 1 || g.State != GroupPreparing {
		t.Fatalf("after a's session: %+v", g)
	}
	wantCode(t, g.Leave(a, "", 1_000), "unknown_member")
	if err := g.Leave(b, "", 1_000); err != nil || g.State != GroupEmpty || g.Generation != 2 {
		t.Fatalf("after the last leave: %v %+v", err, g)
	}
}

// A static member (instance id) keeps its member id across restarts, and
// another process claiming the id without the instance is fenced.
func TestGroupStaticMembers(t *testing.T) {
	var g ConsumerGroup
	a, _ := join(t, &g, JoinRequest{Subscription: []string{"/s"}, InstanceID: "host-1"}, "a", 0)
	again, _ := join(t, &g, JoinRequest{Subscription: []string{"/s"}, InstanceID: "host-1"}, "a2", 10)
	if again != a || len(g.Members) != 1 {
		t.Fatalf("a restarted static member got %s (members %+v), want %s", again, g.Members, a)
	}
	req, _ := CheckJoin(JoinRequest{MemberID: a, Subscription: []string{"/s"}})
	if _, _, err := g.Join(req, "x", 20); err == nil || err.Code != "fenced" {
		t.Fatalf("a join as %s without its instance: %v, want fenced", a, err)
	}
	wantCode(t, g.Heartbeat(a, "host-2", g.Generation, 30), "fenced")
}

// Every stream subscribed to goes to one subscriber, and a member whose
// streams others share is not starved.
func TestGroupAssignment(t *testing.T) {
	g := ConsumerGroup{Members: []GroupMember{
		{ID: "a", Subscription: []string{"/x", "/y"}, Joined: true},
		{ID: "b", Subscription: []string{"/x"}, Joined: true},
		{ID: "c", Subscription: []string{"/z"}, Joined: true},
	}, DeadlineMs: 1}
	g.Settle(0)
	got := map[string][]string{}
	for _, m := range g.Members {
		got[m.ID] = m.Assignment
	}
	want := map[string][]string{"a": {"/y"}, "b": {"/x"}, "c": {"/z"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assignment %v, want %v", got, want)
	}
}

func TestCheckJoin(t *testing.T) {
	req, err := CheckJoin(JoinRequest{Subscription: []string{"/b", "/a", "/b"}})
	if err != nil || !reflect.DeepEqual(req.Subscription, []string{"/a", "/b"}) || req.SessionTimeoutMs != DefaultSessionTimeoutMs ||
		req.RebalanceTimeoutMs != DefaultSessionTimeoutMs || req.ClientID != "pico" {
		t.Fatalf("CheckJoin = %+v, %v", req, err)
	}
	for _, bad := range []JoinRequest{{SessionTimeoutMs: 999}, {SessionTimeoutMs: 300_001}, {Subscription: []string{""}},
		{RebalanceTimeoutMs: -1}, {ClientID: "a/b"}, {MemberID: "m\n"}} {
		if _, err := CheckJoin(bad); err == nil {
			t.Errorf("CheckJoin(%+v) passed", bad)
		}
	}
}

func TestGroupEncodings(t *testing.T) {
	var g ConsumerGroup
	join(t, &g, JoinRequest{Subscription: []string{"/s"}}, "a", 5)
	note := "n"
	if err := g.Commit(map[string]CommittedOffset{"/s": {Position: 7, Metadata: &note}, "/t": {}}, nil, 5); err != nil {
		t.Fatal(err)
	}
	b, gerr := EncodeGroup(g)
	if gerr != nil {
		t.Fatal(gerr)
	}
	got, err := DecodeGroup(b)
	if err != nil || !reflect.DeepEqual(got, g) {
		t.Fatalf("round trip %+v, %v", got, err)
	}
	if _, err := DecodeGroup([]byte("{")); err == nil {
		t.Fatal("a broken group decoded")
	}
	big := ConsumerGroup{Offsets: map[string]CommittedOffset{}}
	long := strings.Repeat("m", MaxOffsetMetadata)
	for i := range MaxValueLen / MaxOffsetMetadata {
		big.Offsets[fmt.Sprint("/", i)] = CommittedOffset{Metadata: &long}
	}
	if _, err := EncodeGroup(big); err == nil || err.Code != "capacity_exceeded" {
		t.Fatalf("an oversized group encoded: %v", err)
	}
}

// A fenced commit holds only for a current member of a stable group at its
// generation; an unfenced one always lands; the last write wins.
func TestGroupCommit(t *testing.T) {
	var g ConsumerGroup
	a, _ := join(t, &g, JoinRequest{Subscription: []string{"/s"}, InstanceID: "i"}, "a", 0)
	at := func(p uint64) map[string]CommittedOffset { return map[string]CommittedOffset{"/s": {Position: p}} }
	wantCode(t, g.Commit(at(1), &MemberFence{MemberID: "nobody", Generation: 1}, 1), "unknown_member")
	wantCode(t, g.Commit(at(1), &MemberFence{MemberID: a, Generation: 1}, 1), "fenced")
	wantCode(t, g.Commit(at(1), &MemberFence{MemberID: a, InstanceID: "i", Generation: 2}, 1), "illegal_generation")
	if err := g.Commit(at(5), &MemberFence{MemberID: a, InstanceID: "i", Generation: 1}, 1); err != nil {
		t.Fatal(err)
	}
	join(t, &g, JoinRequest{Subscription: []string{"/s"}}, "b", 2) // a rebalance begins
	wantCode(t, g.Commit(at(6), &MemberFence{MemberID: a, InstanceID: "i", Generation: 1}, 3), "rebalance_in_progress")
	if err := g.Commit(at(2), nil, 3); err != nil {
		t.Fatal(err)
	}
	got := g.OffsetsOf([]string{"/s", "/absent"})
	if !reflect.DeepEqual(got, at(2)) {
		t.Fatalf("offsets %v, want %v", got, at(2))
	}
	for _, bad := range []string{"", strings.Repeat("x", 1025), "\xff"} {
		if CheckOffset(bad, CommittedOffset{}) == nil {
			t.Errorf("CheckOffset(%q) passed", bad)
		}
	}
}

// A member keeps the round and generation of its assignment, and a group
// is ripe when a session ran out or its rebalance can complete.
func TestGroupAssignedRoundAndRipe(t *testing.T) {
	var g ConsumerGroup
	a, r1 := join(t, &g, JoinRequest{Subscription: []string{"/s"}, SessionTimeoutMs: 1_000}, "a", 0)
	if m, _ := g.MemberAt(a); m.AssignedRound != r1 || m.Generation != 1 || g.Ripe(999) || !g.Ripe(1_000) {
		t.Fatalf("after one join: %+v ripe %v/%v", m, g.Ripe(999), g.Ripe(1_000))
	}
	join(t, &g, JoinRequest{Subscription: []string{"/s"}, SessionTimeoutMs: 10_000, RebalanceTimeoutMs: 5_000}, "b", 500)
	if m, _ := g.MemberAt(a); m.AssignedRound != r1 || g.Ripe(600) || !g.Ripe(g.DeadlineMs) {
		t.Fatalf("pending: %+v %+v", m, g)
	}
}
