package domain

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// CheckJoin refuses a join whose fields are out of bounds, and fills in
// the defaults: the session timeout, a rebalance timeout equal to it, the
// client id "pico"; the subscription comes back sorted without repeats.
func CheckJoin(req JoinRequest) (JoinRequest, error) {
	if req.SessionTimeoutMs == 0 {
		req.SessionTimeoutMs = DefaultSessionTimeoutMs
	}
	if req.SessionTimeoutMs < MinSessionTimeoutMs || req.SessionTimeoutMs > MaxSessionTimeoutMs {
		return req, malformed("sessionTimeoutMs must be %d to %d", MinSessionTimeoutMs, MaxSessionTimeoutMs)
	}
	if req.RebalanceTimeoutMs == 0 {
		req.RebalanceTimeoutMs = req.SessionTimeoutMs
	}
	if req.RebalanceTimeoutMs < 0 || req.RebalanceTimeoutMs > MaxSessionTimeoutMs {
		return req, malformed("rebalanceTimeoutMs must be 0 to %d", MaxSessionTimeoutMs)
	}
	if req.ClientID == "" {
		req.ClientID = "pico"
	}
	for _, id := range []string{req.MemberID, req.InstanceID, req.ClientID} {
		if len(id) > MaxMemberID || !printableSegment(id) {
			return req, malformed("memberId, instanceId and clientId are printable UTF-8 without /, at most %d bytes", MaxMemberID)
		}
	}
	if len(req.Subscription) > MaxGroupStreams {
		return req, malformed("a subscription holds at most %d streams", MaxGroupStreams)
	}
	for _, s := range req.Subscription {
		if err := CheckOffsetStream(s); err != nil {
			return req, err
		}
	}
	sub := slices.Clone(req.Subscription)
	slices.Sort(sub)
	req.Subscription = slices.Compact(sub)
	return req, nil
}

// Join adds or renews a member (newID names it when the request gives
// no member id and no instance id of a member) and begins a rebalance, or
// joins the one pending; it returns the member's id and the round to wait
// for (see Settle). req must have passed CheckJoin.
func (g *ConsumerGroup) Join(req JoinRequest, newID string, nowMs int64) (string, uint64, *GroupError) {
	g.Expire(nowMs)
	id := req.MemberID
	if id == "" {
		if i := g.byInstance(req.InstanceID); i >= 0 {
			id = g.Members[i].ID
		}
	}
	i := g.member(id)
	switch {
	case id == "":
		if len(g.Members) >= MaxGroupMembers {
			return "", 0, groupErr("bad_request", "the group has %d members, the most it takes", MaxGroupMembers)
		}
		id = newID
	case i < 0:
		return "", 0, groupErr("unknown_member", "unknown group member %s", id)
	}
	if other := g.byInstance(req.InstanceID); other >= 0 && g.Members[other].ID != id {
		g.Members = slices.Delete(g.Members, other, other+1)
	}
	if i = g.member(id); i >= 0 && g.Members[i].InstanceID != req.InstanceID {
		return "", 0, groupErr("fenced", "member %s is held by another instance", id)
	}
	if g.streams(req.Subscription) > MaxGroupStreams {
		return "", 0, groupErr("bad_request", "the group would span more than %d streams", MaxGroupStreams)
	}
	m := GroupMember{ID: id, InstanceID: req.InstanceID, ClientID: req.ClientID, Subscription: req.Subscription,
		SessionTimeoutMs: req.SessionTimeoutMs, RebalanceTimeoutMs: req.RebalanceTimeoutMs, LastSeenMs: nowMs}
	if i >= 0 {
		old := g.Members[i]
		m.Assignment, m.AssignedRound, m.Generation = old.Assignment, old.AssignedRound, old.Generation
		g.Members[i] = m
	} else {
		at, _ := slices.BinarySearchFunc(g.Members, id, func(m GroupMember, id string) int { return strings.Compare(m.ID, id) })
		g.Members = slices.Insert(g.Members, at, m)
	}
	g.begin(nowMs)
	g.Members[g.member(id)].Joined = true
	g.Settle(nowMs)
	return id, g.Round, nil
}

// begin starts a rebalance unless one is pending: every member is
// expected to join by now plus the longest rebalance timeout.
func (g *ConsumerGroup) begin(nowMs int64) {
	if g.DeadlineMs != 0 {
		return
	}
	longest := int64(0)
	for i := range g.Members {
		longest = max(longest, g.Members[i].RebalanceTimeoutMs)
		g.Members[i].Joined = false
	}
	g.State, g.DeadlineMs, g.Round = GroupPreparing, nowMs+longest, g.Round+1
}

// Settle completes the pending rebalance once every member joined it or
// its deadline passed, dropping those that did not: the generation moves
// on and every stream subscribed to is assigned. It reports whether it
// changed g.
func (g *ConsumerGroup) Settle(nowMs int64) bool {
	if g.DeadlineMs == 0 {
		return false
	}
	all := !slices.ContainsFunc(g.Members, func(m GroupMember) bool { return !m.Joined })
	if !all && nowMs < g.DeadlineMs {
		return false
	}
	g.Members = slices.DeleteFunc(g.Members, func(m GroupMember) bool { return !m.Joined })
	g.DeadlineMs, g.Settled = 0, g.Round
	if len(g.Members) == 0 {
		g.State = GroupEmpty
		return true
	}
	g.Generation = nextGeneration(g.Generation)
	g.State = GroupStable
	g.assign()
	for i := range g.Members {
		g.Members[i].Joined, g.Members[i].AssignedRound, g.Members[i].Generation = false, g.Round, g.Generation
	}
	return true
}

// Ripe reports whether an update at nowMs would change g on its own: a
// session ran out, or the pending rebalance can complete.
func (g ConsumerGroup) Ripe(nowMs int64) bool {
	if slices.ContainsFunc(g.Members, func(m GroupMember) bool { return nowMs-m.LastSeenMs >= m.SessionTimeoutMs }) {
		return true
	}
	return g.DeadlineMs != 0 && (nowMs >= g.DeadlineMs || !slices.ContainsFunc(g.Members, func(m GroupMember) bool { return !m.Joined }))
}

func nextGeneration(g int32) int32 {
	if g == math.MaxInt32 {
		return 1
	}
	return g + 1
}

// Fence checks a member's claim to the current generation: known, of its
// instance, at the generation; stable says the group must also not be
// rebalancing.
func (g *ConsumerGroup) Fence(id, instance string, generation int32, stable bool) *GroupError {
	if _, err := g.claim(id, instance); err != nil {
		return err
	}
	switch {
	case g.Generation != generation:
		return groupErr("illegal_generation", "generation %d is not the group's %d", generation, g.Generation)
	case stable && g.State != GroupStable:
		return groupErr("rebalance_in_progress", "the group is rebalancing: join again")
	}
	return nil
}

// claim finds member id, which instance must hold.
func (g *ConsumerGroup) claim(id, instance string) (int, *GroupError) {
	i := g.member(id)
	switch {
	case i < 0:
		return i, groupErr("unknown_member", "unknown group member %s", id)
	case g.Members[i].InstanceID != instance:
		return i, groupErr("fenced", "member %s is held by another instance", id)
	}
	return i, nil
}

// Heartbeat renews a member's session; during a rebalance it still
// renews, and answers that the member must join again.
func (g *ConsumerGroup) Heartbeat(id, instance string, generation int32, nowMs int64) *GroupError {
	g.Expire(nowMs)
	if err := g.Fence(id, instance, generation, false); err != nil {
		return err
	}
	g.Members[g.member(id)].LastSeenMs = nowMs
	if g.State != GroupStable {
		return groupErr("rebalance_in_progress", "the group is rebalancing: join again")
	}
	return nil
}

// Leave removes a member and cancels a pending rebalance: those waiting
// on it are told to join again.
func (g *ConsumerGroup) Leave(id, instance string, nowMs int64) *GroupError {
	g.Expire(nowMs)
	i, err := g.claim(id, instance)
	if err != nil {
		return err
	}
	g.Members = slices.Delete(g.Members, i, i+1)
	g.DeadlineMs, g.Settled = 0, g.Round
	g.State = GroupPreparing
	g.afterRemoval()
	return nil
}

// MemberAt returns member id.
func (g *ConsumerGroup) MemberAt(id string) (GroupMember, bool) {
	if i := g.member(id); i >= 0 {
		return g.Members[i], true
	}
	return GroupMember{}, false
}

// streams counts the distinct streams the group spans with sub added.
func (g *ConsumerGroup) streams(sub []string) int {
	all := slices.Clone(sub)
	for _, m := range g.Members {
		all = append(all, m.Subscription...)
	}
	slices.Sort(all)
	return len(slices.Compact(all))
}

// assign gives every subscribed stream to one of its subscribers: streams
// with fewer subscribers first (then by name), each to the subscriber
// holding the fewest so far (then the smallest id), so a member whose
// streams others share is not starved.
func (g *ConsumerGroup) assign() {
	subscribers := map[string][]int{}
	for i := range g.Members {
		g.Members[i].Assignment = nil
		for _, s := range g.Members[i].Subscription {
			subscribers[s] = append(subscribers[s], i)
		}
	}
	streams := make([]string, 0, len(subscribers))
	for s := range subscribers {
		streams = append(streams, s)
	}
	slices.SortFunc(streams, func(a, b string) int {
		if d := len(subscribers[a]) - len(subscribers[b]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, s := range streams {
		best := subscribers[s][0] // members are in id order: ties go to the smallest id
		for _, i := range subscribers[s][1:] {
			if len(g.Members[i].Assignment) < len(g.Members[best].Assignment) {
				best = i
			}
		}
		g.Members[best].Assignment = append(g.Members[best].Assignment, s)
	}
	for i := range g.Members {
		slices.Sort(g.Members[i].Assignment)
	}
}

// CheckOffsetStream refuses a stream name a group cannot subscribe to or
// commit for: empty, over 1024 bytes, or not UTF-8.
func CheckOffsetStream(name string) error {
	if name == "" || len(name) > 1024 || !utf8.ValidString(name) {
		return malformed("a group's stream name is 1 to 1024 bytes of UTF-8")
	}
	return nil
}

// MemberFence is a member's claim on a commit: its id, instance and
// generation.
type MemberFence struct {
	MemberID, InstanceID string
	Generation           int32
}

// Commit records offsets, last write winning per stream. A fenced commit
// holds only for a known member of its instance at the current generation
// of a stable group; an unfenced one (fence nil) is an administrator's and
// is not checked.
func (g *ConsumerGroup) Commit(offsets map[string]CommittedOffset, fence *MemberFence, nowMs int64) *GroupError {
	g.Expire(nowMs)
	if fence != nil {
		if err := g.Fence(fence.MemberID, fence.InstanceID, fence.Generation, true); err != nil {
			return err
		}
	}
	if g.Offsets == nil {
		g.Offsets = map[string]CommittedOffset{}
	}
	for stream, o := range offsets {
		g.Offsets[stream] = o
	}
	if len(g.Offsets) > MaxGroupOffsets {
		return groupErr("capacity_exceeded", "a group holds offsets for at most %d streams", MaxGroupOffsets)
	}
	return nil
}

// CheckOffset refuses an offset to commit for stream whose name or note
// is out of bounds.
func CheckOffset(stream string, o CommittedOffset) error {
	if err := CheckOffsetStream(stream); err != nil {
		return err
	}
	if o.Metadata != nil && (len(*o.Metadata) > MaxOffsetMetadata || !utf8.ValidString(*o.Metadata)) {
		return malformed("an offset's metadata is UTF-8 of at most %d bytes", MaxOffsetMetadata)
	}
	return nil
}

// OffsetsOf returns the committed offsets of streams (all of them when
// streams is empty); streams without one are left out.
func (g *ConsumerGroup) OffsetsOf(streams []string) map[string]CommittedOffset {
	out := map[string]CommittedOffset{}
	if len(streams) == 0 {
		for s, o := range g.Offsets {
			out[s] = o
		}
		return out
	}
	for _, s := range streams {
		if o, ok := g.Offsets[s]; ok {
			out[s] = o
		}
	}
	return out
}

// Live reports whether the group has members whose session holds at
// nowMs: a listing shows only those.
func (g *ConsumerGroup) Live(nowMs int64) bool {
	return slices.ContainsFunc(g.Members, func(m GroupMember) bool { return nowMs-m.LastSeenMs < m.SessionTimeoutMs })
}
