package groups

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Plane is what the service needs of the metadata plane.
type Plane interface {
	View() domain.State
	ProposeOne(ctx context.Context, cmd domain.Command) (domain.Result, error)
	// CatchUp waits until the view holds what the log held when called.
	CatchUp(ctx context.Context) error
}

// Config wires a Service.
type Config struct {
	Plane Plane
	By    domain.Proposer
	Now   func() time.Time
	// Poll is how often a waiting join looks at its group (50 ms).
	Poll time.Duration
}

// Service implements ports.Groups.
type Service struct{ cfg Config }

var _ ports.Groups = (*Service)(nil)

// New returns the service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	return &Service{cfg: cfg}
}

func (s *Service) nowMs() int64 { return s.cfg.Now().UnixMilli() }

// maxRaces bounds the re-reads of one update that keeps losing races.
const maxRaces = 32

// update applies fn to a fresh copy of group (the zero group when absent)
// and writes the result if the entry is unchanged since it was read; a
// lost race runs fn again on the newer entry. fn returns false to write
// nothing. It returns the group as it now stands.
func (s *Service) update(ctx context.Context, name string, fn func(*domain.ConsumerGroup) (bool, error)) (domain.ConsumerGroup, error) {
	key := domain.GroupKey(name)
	for range maxRaces {
		g, rev, err := s.read(name)
		if err != nil {
			return g, err
		}
		write, err := fn(&g)
		if err != nil || !write {
			return g, err
		}
		b, gerr := domain.EncodeGroup(g)
		if gerr != nil {
			return g, gerr
		}
		r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKVIf{By: s.cfg.By, Space: domain.SpaceRegistry, Key: key, Value: b, IfRev: rev})
		switch {
		case err != nil:
			return g, ports.Errorf(ports.ErrUnavailable, "cannot write group %s: %v", name, err)
		case r.OK():
			return g, nil
		case r.Code != domain.ResultRevMismatch:
			return g, fmt.Errorf("groups: storing group %s: %s", name, r.Reason)
		}
	}
	return domain.ConsumerGroup{}, ports.Errorf(ports.ErrUnavailable, "group %s is updated too often concurrently; retry", name)
}

// read returns group name as the view holds it, with its entry's
// revision (0: absent).
func (s *Service) read(name string) (domain.ConsumerGroup, uint64, error) {
	if err := domain.CheckGroupName(name); err != nil {
		return domain.ConsumerGroup{}, 0, ports.Errorf(ports.ErrBadRequest, "%v", err)
	}
	v := s.cfg.Plane.View()
	e, ok := v.KV(domain.SpaceRegistry, domain.GroupKey(name))
	if !ok {
		return domain.ConsumerGroup{}, 0, nil
	}
	g, err := domain.DecodeGroup(e.Value)
	if err != nil {
		return g, 0, fmt.Errorf("groups: group %s: %w", name, err)
	}
	return g, e.Rev, nil
}

// current catches up with the log and reads group name: what a read
// answers from holds every write acknowledged before it.
func (s *Service) current(ctx context.Context, name string) (domain.ConsumerGroup, uint64, error) {
	if err := s.cfg.Plane.CatchUp(ctx); err != nil {
		return domain.ConsumerGroup{}, 0, ports.Errorf(ports.ErrUnavailable, "cannot read the metadata log: %v", err)
	}
	return s.read(name)
}

// groupErr passes a rule's refusal on as an error (nil stays nil).
func groupErr(err *domain.GroupError) error {
	if err == nil {
		return nil
	}
	return err
}

// ListGroups returns the groups with live members; see ports.Groups.
func (s *Service) ListGroups(ctx context.Context) ([]ports.GroupSummary, error) {
	if err := s.cfg.Plane.CatchUp(ctx); err != nil {
		return nil, ports.Errorf(ports.ErrUnavailable, "cannot read the metadata log: %v", err)
	}
	v := s.cfg.Plane.View()
	now := s.nowMs()
	var out []ports.GroupSummary
	v.KVFrom(domain.SpaceRegistry, domain.GroupKeyPrefix, func(key string, e domain.KVEntry) bool {
		name, ok := strings.CutPrefix(key, domain.GroupKeyPrefix)
		if !ok {
			return false
		}
		if g, err := domain.DecodeGroup(e.Value); err == nil && g.Live(now) {
			g.Expire(now)
			out = append(out, ports.GroupSummary{Name: name, State: g.State})
		}
		return true
	})
	return out, nil
}

// DescribeGroup returns a group's membership; see ports.Groups.
func (s *Service) DescribeGroup(ctx context.Context, name string) (domain.ConsumerGroup, error) {
	g, rev, err := s.current(ctx, name)
	if err != nil {
		return g, err
	}
	if rev == 0 {
		return g, ports.Errorf(ports.ErrGroupNotFound, "no group named %s", name)
	}
	g.Expire(s.nowMs())
	return g, nil
}

// newMemberID is clientID, a dash and a random UUID.
func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", clientID, b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// JoinGroup joins and waits for the rebalance; see ports.Groups.
func (s *Service) JoinGroup(ctx context.Context, name string, req domain.JoinRequest) (ports.GroupJoined, error) {
	req, err := domain.CheckJoin(req)
	if err != nil {
		return ports.GroupJoined{}, ports.Errorf(ports.ErrBadRequest, "%v", err)
	}
	newID := newMemberID(req.ClientID)
	var id string
	var round uint64
	if _, err := s.update(ctx, name, func(g *domain.ConsumerGroup) (bool, error) {
		var gerr *domain.GroupError
		id, round, gerr = g.Join(req, newID, s.nowMs())
		return gerr == nil, groupErr(gerr)
	}); err != nil {
		return ports.GroupJoined{}, err
	}
	return s.await(ctx, name, id, round)
}

// await waits until round has settled and returns the member's part in
// it: the rebalance completed with the member in it, or it was cancelled
// or the member dropped, which the member learns as the error to join
// again with. A waiter that finds the group ripe (a session ran out, the
// deadline passed) settles it.
func (s *Service) await(ctx context.Context, name, id string, round uint64) (ports.GroupJoined, error) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		g, _, err := s.read(name)
		if err != nil {
			return ports.GroupJoined{}, err
		}
		if g.Settled >= round {
			return joined(g, id, round)
		}
		if g.Ripe(s.nowMs()) {
			if _, err := s.update(ctx, name, func(g *domain.ConsumerGroup) (bool, error) {
				now := s.nowMs()
				expired := g.Expire(now)
				return g.Settle(now) || expired, nil
			}); err != nil {
				return ports.GroupJoined{}, err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ports.GroupJoined{}, ports.Errorf(ports.ErrUnavailable, "the join ended before the rebalance: %v", context.Cause(ctx))
		case <-t.C:
		}
		if err := s.cfg.Plane.CatchUp(ctx); err != nil && ctx.Err() == nil {
			return ports.GroupJoined{}, ports.Errorf(ports.ErrUnavailable, "cannot read the metadata log: %v", err)
		}
	}
}

// joined is member id's answer once round settled in g: its assignment
// from that rebalance or a later one.
func joined(g domain.ConsumerGroup, id string, round uint64) (ports.GroupJoined, error) {
	m, ok := g.MemberAt(id)
	switch {
	case !ok:
		return ports.GroupJoined{}, &domain.GroupError{Code: "unknown_member", Message: fmt.Sprintf("member %s did not join the rebalance in time", id)}
	case m.AssignedRound < round:
		return ports.GroupJoined{}, &domain.GroupError{Code: "rebalance_in_progress", Message: "the rebalance was cancelled by a member leaving: join again"}
	}
	members := make([]string, len(g.Members))
	for i, m := range g.Members {
		members[i] = m.ID
	}
	return ports.GroupJoined{MemberID: id, Generation: m.Generation, Assignment: slices.Clip(m.Assignment), Members: members}, nil
}

// Assignment returns a member's streams; see ports.Groups.
func (s *Service) Assignment(ctx context.Context, name string, f domain.MemberFence) ([]string, error) {
	g, _, err := s.current(ctx, name)
	if err != nil {
		return nil, err
	}
	g.Expire(s.nowMs())
	if gerr := g.Fence(f.MemberID, f.InstanceID, f.Generation, true); gerr != nil {
		return nil, gerr
	}
	m, _ := g.MemberAt(f.MemberID)
	return m.Assignment, nil
}

// Heartbeat renews a session; see ports.Groups.
func (s *Service) Heartbeat(ctx context.Context, name string, f domain.MemberFence) error {
	var refusal *domain.GroupError
	_, err := s.update(ctx, name, func(g *domain.ConsumerGroup) (bool, error) {
		refusal = g.Heartbeat(f.MemberID, f.InstanceID, f.Generation, s.nowMs())
		// a rebalance in progress still renews the session
		return refusal == nil || refusal.Code == "rebalance_in_progress", nil
	})
	if err != nil {
		return err
	}
	return groupErr(refusal)
}

// LeaveGroup removes a member; see ports.Groups.
func (s *Service) LeaveGroup(ctx context.Context, name, member, instance string) error {
	_, err := s.update(ctx, name, func(g *domain.ConsumerGroup) (bool, error) {
		gerr := g.Leave(member, instance, s.nowMs())
		return gerr == nil, groupErr(gerr)
	})
	return err
}

// Subscription returns a member's subscription; see ports.Groups.
func (s *Service) Subscription(ctx context.Context, name, member string) ([]string, error) {
	g, _, err := s.read(name)
	if err != nil {
		return nil, err
	}
	m, ok := g.MemberAt(member)
	if !ok {
		return nil, &domain.GroupError{Code: "unknown_member", Message: fmt.Sprintf("unknown group member %s", member)}
	}
	return m.Subscription, nil
}

// CommitOffsets records offsets; see ports.Groups.
func (s *Service) CommitOffsets(ctx context.Context, name string, offsets map[string]domain.CommittedOffset, fence *domain.MemberFence) error {
	for stream, o := range offsets {
		if err := domain.CheckOffset(stream, o); err != nil {
			return ports.Errorf(ports.ErrBadRequest, "%v", err)
		}
	}
	_, err := s.update(ctx, name, func(g *domain.ConsumerGroup) (bool, error) {
		gerr := g.Commit(offsets, fence, s.nowMs())
		return gerr == nil, groupErr(gerr)
	})
	return err
}

// FetchOffsets returns committed offsets; see ports.Groups.
func (s *Service) FetchOffsets(ctx context.Context, name string, streams []string) (map[string]domain.CommittedOffset, error) {
	g, _, err := s.current(ctx, name)
	if err != nil {
		return nil, err
	}
	return g.OffsetsOf(streams), nil
}
