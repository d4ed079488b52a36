package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picoclient"
)

type groupJoin struct {
	MemberID   string   `json:"memberId"`
	Generation int32    `json:"generation"`
	Assignment []string `json:"assignment"`
	Members    []string `json:"members"`
}

func decodeInto[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("%s: body %s: %v", r.what, clipBody(r.body), err)
	}
	return v
}

// testGroups: the original's consumer groups over HTTP. Two members share
// two streams after a rebalance the second join begins and the first
// joins on its heartbeat's word; commits are fenced by generation and
// instance; bad bodies are 400s that say why.
func testGroups(t *testing.T, base string) {
	root := rootURL(base)
	prefix := strings.TrimPrefix(base, root)
	g := root + "/_groups/" + strings.ReplaceAll(strings.Trim(prefix, "/"), "/", "-")
	streams := []string{prefix + "/a", prefix + "/b"}
	subJSON, _ := json.Marshal(streams)
	joinBody := func(extra string) []byte {
		return []byte(fmt.Sprintf(`{"subscription":%s,"sessionTimeoutMs":20000%s}`, subJSON, extra))
	}

	a := decodeInto[groupJoin](t, send(t, "POST", g+"/members", nil, joinBody(`,"instanceId":"host-a","clientId":"e2e"`)).wantStatus(t, 200))
	if a.Generation != 1 || !slices.Equal(a.Assignment, streams) || !strings.HasPrefix(a.MemberID, "e2e-") {
		t.Fatalf("the first join: %+v", a)
	}
	pending := sendAsync("POST", g+"/members", nil, joinBody(""))
	hb := func(member string, body string) reply {
		return send(t, "POST", g+"/members/"+member+"/heartbeat", nil, []byte(body))
	}
	for i := 0; ; i++ {
		r := hb(a.MemberID, `{"generation":1,"instanceId":"host-a"}`)
		if r.status == 409 {
			r.wantError(t, 409, "rebalance_in_progress")
			break
		}
		r.wantStatus(t, 204)
		if i == 1000 {
			t.Fatal("the second join never began a rebalance")
		}
	}
	a = decodeInto[groupJoin](t, send(t, "POST", g+"/members", nil,
		joinBody(fmt.Sprintf(`,"memberId":%q,"instanceId":"host-a"`, a.MemberID))).wantStatus(t, 200))
	br := <-pending
	if br.err != nil {
		t.Fatal(br.err)
	}
	b := decodeInto[groupJoin](t, br.reply.wantStatus(t, 200))
	both := append(slices.Clone(a.Assignment), b.Assignment...)
	slices.Sort(both)
	if a.Generation != 2 || b.Generation != 2 || len(a.Assignment) != 1 || !slices.Equal(both, streams) || len(b.Members) != 2 {
		t.Fatalf("after the rebalance: %+v and %+v", a, b)
	}
	send(t, "GET", fmt.Sprintf("%s/members/%s?generation=2&instanceId=host-a", g, a.MemberID), nil, nil).wantStatus(t, 200).
		wantBody(t, fmt.Sprintf(`{"generation":2,"assignment":[%q]}`, a.Assignment[0]))
	send(t, "GET", fmt.Sprintf("%s/members/%s?generation=1&instanceId=host-a", g, a.MemberID), nil, nil).wantError(t, 409, "illegal_generation")
	hb(a.MemberID, `{"generation":2}`).wantError(t, 403, "fenced")
	hb("nobody", `{"generation":2}`).wantError(t, 404, "unknown_member")
	hb(b.MemberID, `{"generation":2}`).wantStatus(t, 204)

	type described struct {
		Group, State string
		Generation   int32
		Members      []struct {
			MemberID   string  `json:"memberId"`
			InstanceID *string `json:"instanceId"`
			Assignment []string
		}
	}
	d := decodeInto[described](t, send(t, "GET", g, nil, nil).wantStatus(t, 200))
	if d.State != "Stable" || d.Generation != 2 || len(d.Members) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	list := string(send(t, "GET", root+"/_groups", nil, nil).wantStatus(t, 200).body)
	if !strings.Contains(list, fmt.Sprintf(`{"group":%q,"state":"Stable"}`, strings.TrimPrefix(g, root+"/_groups/"))) {
		t.Fatalf("the listing %s lacks the group", list)
	}

	commit := func(body string) reply { return send(t, "PUT", g+"/offsets", nil, []byte(body)) }
	aStream := a.Assignment[0]
	commit(fmt.Sprintf(`{"offsets":{%q:{"position":3}},"memberId":%q,"generation":1,"instanceId":"host-a"}`, aStream, a.MemberID)).
		wantError(t, 409, "illegal_generation")
	commit(fmt.Sprintf(`{"offsets":{%q:{"position":7,"metadata":"m"}},"memberId":%q,"generation":2,"instanceId":"host-a"}`, aStream, a.MemberID)).
		wantStatus(t, 204)
	commit(fmt.Sprintf(`{"offsets":{%q:{"position":1}}}`, b.Assignment[0])).wantStatus(t, 204) // unfenced
	send(t, "GET", g+"/offsets?stream="+aStream, nil, nil).wantStatus(t, 200).
		wantBody(t, fmt.Sprintf(`{"offsets":{%q:{"position":7,"metadata":"m"}}}`, aStream))
	all := decodeInto[struct {
		Offsets map[string]struct{ Position uint64 }
	}](t, send(t, "GET", g+"/offsets", nil, nil).wantStatus(t, 200))
	if len(all.Offsets) != 2 || all.Offsets[b.Assignment[0]].Position != 1 {
		t.Fatalf("every offset: %+v", all)
	}
	send(t, "GET", root+"/_groups/absent-group/offsets", nil, nil).wantStatus(t, 200).wantBody(t, `{"offsets":{}}`)

	for body, want := range map[string]string{
		`{"subscription":["/x"],"extra":1}`:             "unknown field",
		`{"memberId":"m"}`:                              "subscription is required",
		`{"subscription":["/x"],"sessionTimeoutMs":10}`: "sessionTimeoutMs must be",
		`{"subscription":"/x"}`:                         "cannot unmarshal",
		`[1]`:                                           "JSON object",
		`{"subscription":["/x"]} {}`:                    "more than one",
		`{"subscription":["/x"],"clientId":"a/b"}`:      "without /",
	} {
		wantMessage(t, send(t, "POST", g+"/members", nil, []byte(body)), 400, want)
	}
	wantMessage(t, commit(`{"offsets":{"/x":{"position":-1}}}`), 400, "cannot unmarshal")
	wantMessage(t, commit(`{"offsets":{"/x":{"position":1}},"memberId":"m"}`), 400, "go together")
	wantMessage(t, commit(`{"offsets":{"/x":{}}}`), 400, "position must be")
	wantMessage(t, hb(b.MemberID, `{}`), 400, "generation is required")
	send(t, "GET", g+"/members/"+b.MemberID, nil, nil).wantError(t, 400, "bad_request")
	send(t, "DELETE", g+"/offsets", nil, nil).wantStatus(t, 405)
	send(t, "GET", g+"/elsewhere", nil, nil).wantError(t, 404, "not_found")

	send(t, "DELETE", g+"/members/"+a.MemberID, nil, nil).wantError(t, 403, "fenced")
	send(t, "DELETE", g+"/members/"+a.MemberID+"?instanceId=host-a", nil, nil).wantStatus(t, 204)
	send(t, "DELETE", g+"/members/"+b.MemberID, nil, nil).wantStatus(t, 204)
	d = decodeInto[described](t, send(t, "GET", g, nil, nil).wantStatus(t, 200))
	if d.State != "Empty" || len(d.Members) != 0 {
		t.Fatalf("after both left: %+v", d)
	}
	send(t, "GET", root+"/_groups/absent-group", nil, nil).wantError(t, 404, "not_found")
}

// testGroupsGoClient: two members of the Go client's GroupMember share two
// streams: the second's join makes the first join again on its next
// heartbeat, which publishes its new assignment; a commit is fenced by the
// member's generation.
func testGroupsGoClient(t *testing.T, base string) {
	root := rootURL(base)
	prefix := strings.TrimPrefix(base, root)
	group := strings.ReplaceAll(strings.Trim(prefix, "/"), "/", "-")
	streams := []string{prefix + "/a", prefix + "/b"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := picoclient.New(root, picoclient.Options{Timeout: 20 * time.Second})
	opts := picoclient.GroupOptions{ClientID: "go", SessionTimeout: 5 * time.Second, HeartbeatInterval: 50 * time.Millisecond}
	a, err := c.JoinAs(ctx, group, streams, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m := a.Membership(); m.Generation != 1 || !slices.Equal(m.Assignment, streams) {
		t.Fatalf("the first member: %+v", m)
	}
	b, err := c.JoinAs(ctx, group, streams, opts)
	if err != nil {
		t.Fatal(err)
	}
	var am picoclient.Membership
	select {
	case am = <-a.Changes():
	case <-ctx.Done():
		t.Fatal("the first member never learned of the rebalance")
	}
	bm := b.Membership()
	both := append(slices.Clone(am.Assignment), bm.Assignment...)
	slices.Sort(both)
	if am.Generation != 2 || bm.Generation != 2 || !slices.Equal(both, streams) {
		t.Fatalf("after the rebalance: %+v and %+v", am, bm)
	}
	if err := a.Commit(ctx, map[string]picoclient.Offset{am.Assignment[0]: {Position: 9}}); err != nil {
		t.Fatal(err)
	}
	stale := picoclient.Fence{MemberID: am.MemberID, Generation: 1}
	if err := c.CommitOffsets(ctx, group, map[string]picoclient.Offset{am.Assignment[0]: {Position: 1}}, &stale); !errors.Is(err, picoclient.ErrIllegalGeneration) {
		t.Fatalf("a commit at generation 1: %v", err)
	}
	got, err := c.FetchOffsets(ctx, group, am.Assignment[0])
	if err != nil || got[am.Assignment[0]].Position != 9 || len(got) != 1 {
		t.Fatalf("offsets %v %v", got, err)
	}
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-b.Changes():
		if !slices.Equal(m.Assignment, streams) || m.Generation != 3 {
			t.Fatalf("after the first left: %+v", m)
		}
	case <-ctx.Done():
		t.Fatal("the second member never took the first's stream")
	}
	if err := b.Leave(ctx); err != nil || a.Err() != nil || b.Err() != nil {
		t.Fatalf("leave: %v; errors %v %v", err, a.Err(), b.Err())
	}
}
