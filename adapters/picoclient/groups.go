package picoclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// The consumer group refusals, for errors.Is (a member held by another
// instance is ErrFenced).
var (
	ErrUnknownMember       = errors.New("unknown group member")
	ErrIllegalGeneration   = errors.New("group generation is not the current one")
	ErrRebalanceInProgress = errors.New("group is rebalancing: join again")
)

// GroupOptions configure a member of a consumer group; zero values take
// the server's defaults (a 30 s session, a rebalance timeout equal to it,
// client id "pico") and a heartbeat every third of the session.
type GroupOptions struct {
	InstanceID, ClientID             string
	SessionTimeout, RebalanceTimeout time.Duration
	HeartbeatInterval                time.Duration
}

// Membership is a completed join: the member's id, the generation, the
// streams assigned to it and every member's id.
type Membership struct {
	MemberID   string   `json:"memberId"`
	Generation int32    `json:"generation"`
	Assignment []string `json:"assignment"`
	Members    []string `json:"members"`
}

// Offset is a group's committed position in a stream, with a note.
type Offset struct {
	Position uint64  `json:"position"`
	Metadata *string `json:"metadata"`
}

// Fence is a member's claim on a commit.
type Fence struct {
	MemberID, InstanceID string
	Generation           int32
}

func groupPath(group string, parts ...string) string {
	p := "/_groups/" + group
	for _, s := range parts {
		p += "/" + s
	}
	return p
}

func (c *Client) groupJSON(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	resp, err := c.do(ctx, request{method: method, name: path, query: query, body: body,
		header: http.Header{"Content-Type": {"application/json"}}})
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// JoinGroup joins group (memberID "" for a new member) and waits for the
// rebalance the join takes part in.
func (c *Client) JoinGroup(ctx context.Context, group string, subscription []string, memberID string, opts GroupOptions) (Membership, error) {
	type joinBody struct {
		Subscription       []string `json:"subscription"`
		MemberID           string   `json:"memberId,omitempty"`
		InstanceID         string   `json:"instanceId,omitempty"`
		ClientID           string   `json:"clientId,omitempty"`
		SessionTimeoutMs   int64    `json:"sessionTimeoutMs,omitempty"`
		RebalanceTimeoutMs int64    `json:"rebalanceTimeoutMs,omitempty"`
	}
	in := joinBody{Subscription: subscription, MemberID: memberID, InstanceID: opts.InstanceID, ClientID: opts.ClientID,
		SessionTimeoutMs: opts.SessionTimeout.Milliseconds(), RebalanceTimeoutMs: opts.RebalanceTimeout.Milliseconds()}
	if in.Subscription == nil {
		in.Subscription = []string{}
	}
	var m Membership
	err := c.groupJSON(ctx, http.MethodPost, groupPath(group, "members"), nil, in, &m)
	return m, err
}

// Heartbeat renews a member's session.
func (c *Client) Heartbeat(ctx context.Context, group string, f Fence) error {
	in := struct {
		Generation int32  `json:"generation"`
		InstanceID string `json:"instanceId,omitempty"`
	}{f.Generation, f.InstanceID}
	return c.groupJSON(ctx, http.MethodPost, groupPath(group, "members", f.MemberID, "heartbeat"), nil, in, nil)
}

// LeaveGroup removes a member.
func (c *Client) LeaveGroup(ctx context.Context, group, memberID, instanceID string) error {
	q := url.Values{}
	if instanceID != "" {
		q.Set("instanceId", instanceID)
	}
	return c.groupJSON(ctx, http.MethodDelete, groupPath(group, "members", memberID), q, nil, nil)
}

// CommitOffsets records the group's positions; fence nil commits without
// the server checking membership.
func (c *Client) CommitOffsets(ctx context.Context, group string, offsets map[string]Offset, fence *Fence) error {
	in := struct {
		Offsets    map[string]Offset `json:"offsets"`
		MemberID   *string           `json:"memberId,omitempty"`
		Generation *int32            `json:"generation,omitempty"`
		InstanceID string            `json:"instanceId,omitempty"`
	}{Offsets: offsets}
	if fence != nil {
		in.MemberID, in.Generation, in.InstanceID = &fence.MemberID, &fence.Generation, fence.InstanceID
	}
	return c.groupJSON(ctx, http.MethodPut, groupPath(group, "offsets"), nil, in, nil)
}

// FetchOffsets returns the committed offsets of streams (every one when
// none is named); a stream without one is absent from the map.
func (c *Client) FetchOffsets(ctx context.Context, group string, streams ...string) (map[string]Offset, error) {
	var out struct {
		Offsets map[string]Offset `json:"offsets"`
	}
	err := c.groupJSON(ctx, http.MethodGet, groupPath(group, "offsets"), url.Values{"stream": streams}, nil, &out)
	return out.Offsets, err
}

// GroupMember is a member that keeps its session: it heartbeats, joins
// again when the group rebalances, and publishes each new assignment.
type GroupMember struct {
	c            *Client
	group        string
	subscription []string
	opts         GroupOptions
	changes      chan Membership
	stop         context.CancelFunc
	done         chan struct{}

	mu  sync.Mutex
	cur Membership
	err error
}

// JoinAs joins group and keeps the membership until Leave or ctx ends.
func (c *Client) JoinAs(ctx context.Context, group string, subscription []string, opts GroupOptions) (*GroupMember, error) {
	m, err := c.JoinGroup(ctx, group, subscription, "", opts)
	if err != nil {
		return nil, err
	}
	if opts.HeartbeatInterval <= 0 {
		session := opts.SessionTimeout
		if session <= 0 {
			session = 30 * time.Second
		}
		opts.HeartbeatInterval = session / 3
	}
	ctx, stop := context.WithCancel(ctx)
	g := &GroupMember{c: c, group: group, subscription: subscription, opts: opts, cur: m,
		changes: make(chan Membership, 1), stop: stop, done: make(chan struct{})}
	go g.run(ctx)
	return g, nil
}

// Membership is the member's current assignment.
func (g *GroupMember) Membership() Membership {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur
}

// Changes delivers each new membership after a rebalance (the latest one
// when the reader is slow); it is closed when the member stops.
func (g *GroupMember) Changes() <-chan Membership { return g.changes }

// Err is why the member stopped on its own, nil while it runs or after
// Leave.
func (g *GroupMember) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *GroupMember) fence() Fence {
	m := g.Membership()
	return Fence{MemberID: m.MemberID, InstanceID: g.opts.InstanceID, Generation: m.Generation}
}

// Commit records offsets fenced by the member's generation.
func (g *GroupMember) Commit(ctx context.Context, offsets map[string]Offset) error {
	f := g.fence()
	return g.c.CommitOffsets(ctx, g.group, offsets, &f)
}

// Leave stops the heartbeats and leaves the group.
func (g *GroupMember) Leave(ctx context.Context) error {
	g.stop()
	<-g.done
	if g.Err() != nil {
		return nil
	}
	return g.c.LeaveGroup(ctx, g.group, g.Membership().MemberID, g.opts.InstanceID)
}

func (g *GroupMember) run(ctx context.Context) {
	defer close(g.done)
	defer close(g.changes)
	t := time.NewTicker(g.opts.HeartbeatInterval)
	defer t.Stop()
	retry := newBackoff(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := g.c.Heartbeat(ctx, g.group, g.fence())
		switch {
		case err == nil, ctx.Err() != nil:
			continue
		case errors.Is(err, ErrRebalanceInProgress), errors.Is(err, ErrIllegalGeneration):
			err = g.rejoin(ctx, g.fence().MemberID)
		case errors.Is(err, ErrUnknownMember):
			err = g.rejoin(ctx, "")
		case transient(err):
			err = retry.wait(ctx, err)
		}
		if err != nil && ctx.Err() == nil {
			g.mu.Lock()
			g.err = err
			g.mu.Unlock()
			return
		}
	}
}

// rejoin joins again until a join completes, as a fresh member once the
// group no longer knows this one.
func (g *GroupMember) rejoin(ctx context.Context, memberID string) error {
	retry := newBackoff(0)
	for {
		m, err := g.c.JoinGroup(ctx, g.group, g.subscription, memberID, g.opts)
		switch {
		case err == nil:
			g.mu.Lock()
			g.cur = m
			g.mu.Unlock()
			select {
			case <-g.changes: // drop the unread one: the latest wins
			default:
			}
			g.changes <- m
			return nil
		case errors.Is(err, ErrUnknownMember):
			memberID = ""
		case errors.Is(err, ErrRebalanceInProgress) || transient(err):
			if err := retry.wait(ctx, err); err != nil {
				return err
			}
		default:
			return err
		}
	}
}
