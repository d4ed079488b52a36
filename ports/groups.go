package ports

import (
	"context"
	"errors"

	"github.com/picomq/pico/domain"
)

// ErrGroupNotFound: no group of that name has members or offsets.
var ErrGroupNotFound = errors.New("no such group")

// Groups are the consumer groups: members share the streams they
// subscribe to, one member a stream, and commit the group's position in
// each. A group lives in the replicated metadata, so every node serves
// every group. A refusal by the group's rules is a *domain.GroupError,
// whose Code the protocol shows.
type Groups interface {
	// ListGroups returns the groups with live members, by name.
	ListGroups(ctx context.Context) ([]GroupSummary, error)
	// DescribeGroup returns group's membership, or ErrGroupNotFound.
	DescribeGroup(ctx context.Context, group string) (domain.ConsumerGroup, error)
	// JoinGroup joins or rejoins a member and waits, at most the
	// rebalance timeout, for the rebalance the join takes part in.
	JoinGroup(ctx context.Context, group string, req domain.JoinRequest) (GroupJoined, error)
	// Assignment returns a member's streams at its generation.
	Assignment(ctx context.Context, group string, fence domain.MemberFence) ([]string, error)
	// Heartbeat renews a member's session.
	Heartbeat(ctx context.Context, group string, fence domain.MemberFence) error
	// LeaveGroup removes a member.
	LeaveGroup(ctx context.Context, group, member, instance string) error
	// Subscription returns a member's subscription (for authorization).
	Subscription(ctx context.Context, group, member string) ([]string, error)
	// CommitOffsets records offsets; fence nil commits without checks.
	CommitOffsets(ctx context.Context, group string, offsets map[string]domain.CommittedOffset, fence *domain.MemberFence) error
	// FetchOffsets returns the committed offsets of streams (all when
	// empty); an unknown group has none.
	FetchOffsets(ctx context.Context, group string, streams []string) (map[string]domain.CommittedOffset, error)
}

// GroupSummary is one group of a listing.
type GroupSummary struct {
	Name, State string
}

// GroupJoined is a completed join: the member's id, the generation it
// joined and its streams, and every member's id.
type GroupJoined struct {
	MemberID   string
	Generation int32
	Assignment []string
	Members    []string
}
