package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// A consumer group shares streams among its members, as the original's
// groups do: a member joins with the streams it subscribes to, a rebalance
// gives each stream to one subscriber, and a generation number fences
// members of an earlier assignment. The group is one registry entry
// (GroupKey) holding the membership and the committed offsets, replaced
// by compare-and-set, so a fenced commit is checked against the very
// membership it lands with. These are the rules; time comes in as nowMs.

// Group states, as described to clients.
const (
	GroupEmpty     = "Empty"
	GroupPreparing = "PreparingRebalance"
	GroupStable    = "Stable"
)

// Group limits and defaults.
const (
	DefaultSessionTimeoutMs = 30_000
	MinSessionTimeoutMs     = 1_000
	MaxSessionTimeoutMs     = 300_000
	MaxGroupName            = 255
	MaxMemberID             = 512
	MaxGroupMembers         = 1_000
	MaxGroupStreams         = 1_000
	// MaxGroupOffsets bounds the streams a group holds offsets for.
	MaxGroupOffsets = 10_000
	// MaxOffsetMetadata bounds the note committed with one offset.
	MaxOffsetMetadata = 4_096
)

// GroupError is a refusal of a group request: Code is the error code the
// wire shows (unknown_member, fenced, illegal_generation,
// rebalance_in_progress, bad_request).
type GroupError struct {
	Code, Message string
}

func (e *GroupError) Error() string { return e.Message }

func groupErr(code, format string, args ...any) *GroupError {
	return &GroupError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// GroupMember is one member of a group.
type GroupMember struct {
	ID                 string   `json:"id"`
	InstanceID         string   `json:"instanceId,omitempty"`
	ClientID           string   `json:"clientId"`
	Subscription       []string `json:"subscription"`
	Assignment         []string `json:"assignment"`
	SessionTimeoutMs   int64    `json:"sessionTimeoutMs"`
	RebalanceTimeoutMs int64    `json:"rebalanceTimeoutMs"`
	LastSeenMs         int64    `json:"lastSeenMs"`
	// Joined: the member joined during the pending rebalance.
	Joined bool `json:"joined,omitempty"`
	// AssignedRound and Generation say which rebalance gave the member its
	// Assignment, and under which generation.
	AssignedRound uint64 `json:"assignedRound,omitempty"`
	Generation    int32  `json:"generation,omitempty"`
}

// ConsumerGroup is a consumer group's membership.
type ConsumerGroup struct {
	State      string `json:"state"`
	Generation int32  `json:"generation"`
	// DeadlineMs is when the pending rebalance completes without the
	// members that have not joined it; 0: none is pending.
	DeadlineMs int64 `json:"deadlineMs,omitempty"`
	// Round counts the rebalances begun, Settled the last one settled
	// (completed or cancelled): a join waits for its round to settle.
	Round   uint64        `json:"round"`
	Settled uint64        `json:"settled"`
	Members []GroupMember `json:"members"`
	// Offsets are the committed positions, by stream.
	Offsets map[string]CommittedOffset `json:"offsets,omitempty"`
}

// JoinRequest is a member's join.
type JoinRequest struct {
	Subscription                         []string
	MemberID, InstanceID, ClientID       string
	SessionTimeoutMs, RebalanceTimeoutMs int64
}

// GroupKeyPrefix starts every group's registry key.
const GroupKeyPrefix = "pico/group/"

// GroupKey is the registry key of group name.
func GroupKey(name string) string { return GroupKeyPrefix + name }

// CheckGroupName refuses an empty or overlong name, or one that is not
// printable UTF-8 text of one path segment.
func CheckGroupName(name string) error {
	if name == "" || len(name) > MaxGroupName {
		return malformed("group name must be 1 to %d bytes", MaxGroupName)
	}
	if !printableSegment(name) {
		return malformed("group name %q is not printable UTF-8 without /", name)
	}
	return nil
}

// printableSegment reports whether s is UTF-8 text without control
// characters or slashes: it goes in a URL path as one segment.
func printableSegment(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '/' })
}

// EncodeGroup is the registry value of g, or an error when it is over a
// registry value's size.
func EncodeGroup(g ConsumerGroup) ([]byte, *GroupError) {
	b, err := json.Marshal(g)
	if err != nil {
		panic(fmt.Sprintf("domain: encoding a group: %v", err)) // strings and integers only
	}
	if len(b) > MaxValueLen {
		return nil, groupErr("capacity_exceeded", "the group's state would be %d bytes, over the %d a group holds", len(b), MaxValueLen)
	}
	return b, nil
}

// DecodeGroup decodes a registry value written by EncodeGroup.
func DecodeGroup(b []byte) (ConsumerGroup, error) {
	var g ConsumerGroup
	if err := json.Unmarshal(b, &g); err != nil {
		return ConsumerGroup{}, fmt.Errorf("%w: group: %v", ErrDecode, err)
	}
	return g, nil
}

func (g *ConsumerGroup) member(id string) int {
	i, found := slices.BinarySearchFunc(g.Members, id, func(m GroupMember, id string) int { return strings.Compare(m.ID, id) })
	if !found {
		return -1
	}
	return i
}

func (g *ConsumerGroup) byInstance(instance string) int {
	if instance == "" {
		return -1
	}
	return slices.IndexFunc(g.Members, func(m GroupMember) bool { return m.InstanceID == instance })
}

// Expire drops the members whose session ran out by nowMs. With none left
// the group is empty (its generation kept); a stable group with some left
// waits for a rebalance. It reports whether it dropped any.
func (g *ConsumerGroup) Expire(nowMs int64) bool {
	n := len(g.Members)
	g.Members = slices.DeleteFunc(g.Members, func(m GroupMember) bool { return nowMs-m.LastSeenMs >= m.SessionTimeoutMs })
	if len(g.Members) == n {
		return false
	}
	g.afterRemoval()
	return true
}

// afterRemoval settles the state once members left or expired.
func (g *ConsumerGroup) afterRemoval() {
	switch {
	case len(g.Members) == 0:
		g.State, g.DeadlineMs, g.Settled = GroupEmpty, 0, g.Round
	case g.State == GroupStable:
		g.State = GroupPreparing
	}
}

// CommittedOffset is a group's position in one stream, with the member's
// note.
type CommittedOffset struct {
	Position uint64  `json:"position"`
	Metadata *string `json:"metadata"`
}
