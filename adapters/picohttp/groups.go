package picohttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// groupsPath is the reserved path of the consumer groups: no stream lives
// under it.
const groupsPath = "/_groups"

// groupPath is a parsed path under /_groups: the group, what of it, and
// the member.
type groupPath struct {
	group, part, member, action string
}

// parseGroupPath splits rest (the path after /_groups, escaped) into its
// segments: "", /{g}, /{g}/members, /{g}/members/{m},
// /{g}/members/{m}/heartbeat or /{g}/offsets.
func parseGroupPath(rest string) (groupPath, bool) {
	if rest == "" || rest == "/" {
		return groupPath{}, true
	}
	segs := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return groupPath{}, false
		}
		segs[i] = u
	}
	p := groupPath{group: segs[0]}
	switch {
	case len(segs) == 1:
	case len(segs) == 2 && (segs[1] == "members" || segs[1] == "offsets"):
		p.part = segs[1]
	case len(segs) == 3 && segs[1] == "members":
		p.part, p.member = segs[1], segs[2]
	case len(segs) == 4 && segs[1] == "members" && segs[3] == "heartbeat":
		p.part, p.member, p.action = segs[1], segs[2], segs[3]
	default:
		return groupPath{}, false
	}
	return p, true
}

// groupRoute is the gate's operation of a group request: a listing or a
// description inspects, anything else reads, and the handler then checks
// read on every stream the request names.
func groupRoute(rest string) authgate.Route {
	if p, ok := parseGroupPath(rest); ok && p.part == "" {
		return authgate.Route{Op: domain.OpStreamInspect}
	}
	return authgate.Route{Op: domain.OpRead}
}

// serveGroups handles every request under /_groups.
func (s *server) serveGroups(c echo.Context, rest string) error {
	if s.cfg.Groups == nil {
		return ports.Errorf(ports.ErrGroupNotFound, "this node serves no consumer groups")
	}
	p, ok := parseGroupPath(rest)
	if !ok {
		return ports.Errorf(ports.ErrGroupNotFound, "no such group resource; see /_groups/{group}/members and /_groups/{group}/offsets")
	}
	m := c.Request().Method
	switch {
	case p.group == "" && m == http.MethodGet:
		return s.listGroups(c)
	case p.part == "" && m == http.MethodGet:
		return s.describeGroup(c, p.group)
	case p.part == "members" && p.member == "" && m == http.MethodPost:
		return s.joinGroup(c, p.group)
	case p.member != "" && p.action == "" && m == http.MethodGet:
		return s.memberAssignment(c, p)
	case p.member != "" && p.action == "" && m == http.MethodDelete:
		return s.leaveGroup(c, p)
	case p.action == "heartbeat" && m == http.MethodPost:
		return s.heartbeat(c, p)
	case p.part == "offsets" && m == http.MethodPut:
		return s.commitOffsets(c, p.group)
	case p.part == "offsets" && m == http.MethodGet:
		return s.fetchOffsets(c, p.group)
	}
	return echo.ErrMethodNotAllowed
}

func groupJSON(c echo.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	return c.JSONBlob(http.StatusOK, b)
}

func groupDone(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusNoContent)
}

func (s *server) listGroups(c echo.Context) error {
	groups, err := s.cfg.Groups.ListGroups(c.Request().Context())
	if err != nil {
		return err
	}
	type entry struct {
		Group string `json:"group"`
		State string `json:"state"`
	}
	out := struct {
		Groups []entry `json:"groups"`
	}{Groups: []entry{}}
	for _, g := range groups {
		out.Groups = append(out.Groups, entry{g.Name, g.State})
	}
	return groupJSON(c, out)
}

type memberJSON struct {
	MemberID     string   `json:"memberId"`
	InstanceID   *string  `json:"instanceId"`
	ClientID     string   `json:"clientId"`
	Subscription []string `json:"subscription"`
	Assignment   []string `json:"assignment"`
}

func (s *server) describeGroup(c echo.Context, name string) error {
	g, err := s.cfg.Groups.DescribeGroup(c.Request().Context(), name)
	if err != nil {
		return err
	}
	scope := relativeNames(c)
	members := make([]memberJSON, 0, len(g.Members))
	for _, m := range g.Members {
		j := memberJSON{MemberID: m.ID, ClientID: m.ClientID, Subscription: scope(m.Subscription), Assignment: scope(m.Assignment)}
		if m.InstanceID != "" {
			j.InstanceID = &m.InstanceID
		}
		members = append(members, j)
	}
	return groupJSON(c, struct {
		Group      string       `json:"group"`
		State      string       `json:"state"`
		Generation int32        `json:"generation"`
		Members    []memberJSON `json:"members"`
	}{name, g.State, g.Generation, members})
}

func (s *server) joinGroup(c echo.Context, name string) error {
	r := c.Request()
	req, err := decodeJoin(r.Body)
	if err != nil {
		return err
	}
	if req.Subscription, err = s.readable(r, req.Subscription); err != nil {
		return err
	}
	ctx, cancel := s.untilShutdown(r.Context())
	defer cancel()
	j, err := s.cfg.Groups.JoinGroup(ctx, name, req)
	if err != nil {
		return err
	}
	return groupJSON(c, struct {
		MemberID   string   `json:"memberId"`
		Generation int32    `json:"generation"`
		Assignment []string `json:"assignment"`
		Members    []string `json:"members"`
	}{j.MemberID, j.Generation, relativeNames(c)(j.Assignment), j.Members})
}

// untilShutdown is ctx, ended also when the server starts shutting down:
// a join waiting on a rebalance answers 503, which its client retries on
// another node, instead of holding the shutdown up.
func (s *server) untilShutdown(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if s.cfg.Done != nil {
		go func() {
			select {
			case <-s.cfg.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// memberFence reads a member request's generation and instance id from
// the query string.
func memberFence(r *http.Request, p groupPath) (domain.MemberFence, error) {
	q := r.URL.Query()
	gen, err := strconv.ParseInt(q.Get("generation"), 10, 32)
	if err != nil {
		return domain.MemberFence{}, badRequest("generation query parameter is required: a 32-bit integer")
	}
	return domain.MemberFence{MemberID: p.member, InstanceID: q.Get("instanceId"), Generation: int32(gen)}, nil
}

func (s *server) memberAssignment(c echo.Context, p groupPath) error {
	r := c.Request()
	f, err := memberFence(r, p)
	if err != nil {
		return err
	}
	if err := s.memberReadable(r, p); err != nil {
		return err
	}
	streams, err := s.cfg.Groups.Assignment(r.Context(), p.group, f)
	if err != nil {
		return err
	}
	return groupJSON(c, struct {
		Generation int32    `json:"generation"`
		Assignment []string `json:"assignment"`
	}{f.Generation, relativeNames(c)(streams)})
}

func (s *server) heartbeat(c echo.Context, p groupPath) error {
	r := c.Request()
	gen, instance, err := decodeHeartbeat(r.Body)
	if err != nil {
		return err
	}
	if err := s.memberReadable(r, p); err != nil {
		return err
	}
	if err := s.cfg.Groups.Heartbeat(r.Context(), p.group, domain.MemberFence{MemberID: p.member, InstanceID: instance, Generation: gen}); err != nil {
		return err
	}
	return groupDone(c)
}

func (s *server) leaveGroup(c echo.Context, p groupPath) error {
	r := c.Request()
	if err := s.memberReadable(r, p); err != nil {
		return err
	}
	if err := s.cfg.Groups.LeaveGroup(r.Context(), p.group, p.member, r.URL.Query().Get("instanceId")); err != nil {
		return err
	}
	return groupDone(c)
}

func (s *server) commitOffsets(c echo.Context, name string) error {
	r := c.Request()
	offsets, fence, err := decodeCommit(r.Body)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(offsets))
	for stream := range offsets {
		names = append(names, stream)
	}
	stored, err := s.readable(r, names)
	if err != nil {
		return err
	}
	resolved := make(map[string]domain.CommittedOffset, len(offsets))
	for i, stream := range names {
		resolved[stored[i]] = offsets[stream]
	}
	if err := s.cfg.Groups.CommitOffsets(r.Context(), name, resolved, fence); err != nil {
		return err
	}
	return groupDone(c)
}

type offsetJSON struct {
	Position uint64  `json:"position"`
	Metadata *string `json:"metadata"`
}

func (s *server) fetchOffsets(c echo.Context, name string) error {
	r := c.Request()
	streams, err := s.readable(r, r.URL.Query()["stream"])
	if err != nil {
		return err
	}
	offsets, err := s.cfg.Groups.FetchOffsets(r.Context(), name, streams)
	if err != nil {
		return err
	}
	grant, scoped := authgate.GrantOf(r.Context())
	out := map[string]offsetJSON{}
	for stream, o := range offsets {
		if scoped && !grant.Scope.Allows(domain.OpRead, domain.AudiencePico, groupStreamName(stream), 0) {
			continue // a stream the caller may not read is not shown
		}
		if scoped {
			stream = grant.Scope.Relative(stream)
		}
		out[stream] = offsetJSON{o.Position, o.Metadata}
	}
	return groupJSON(c, struct {
		Offsets map[string]offsetJSON `json:"offsets"`
	}{out})
}

// groupStreamName is the stream name a group's stream name checks
// against: names are kept as clients give them, with or without the
// leading slash.
func groupStreamName(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + name
}

// readable resolves streams under the request's grant (an auto-prefixed
// grant stores them under its prefix) and refuses the request unless the
// grant reads every one.
func (s *server) readable(r *http.Request, streams []string) ([]string, error) {
	if !s.gate.On() {
		return streams, nil
	}
	out := make([]string, len(streams))
	for i, name := range streams {
		out[i] = authgate.Resolve(r.Context(), name)
		if err := s.gate.Also(r, domain.OpRead, groupStreamName(name)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// memberReadable refuses a member request unless the grant reads every
// stream the member subscribes to.
func (s *server) memberReadable(r *http.Request, p groupPath) error {
	if !s.gate.On() {
		return nil
	}
	sub, err := s.cfg.Groups.Subscription(r.Context(), p.group, p.member)
	if err != nil {
		return err
	}
	grant, _ := authgate.GrantOf(r.Context())
	for _, name := range sub {
		if err := s.gate.Also(r, domain.OpRead, grant.Scope.Relative(groupStreamName(name))); err != nil {
			return err
		}
	}
	return nil
}

// relativeNames returns how the request's client names stored streams.
func relativeNames(c echo.Context) func([]string) []string {
	grant, ok := authgate.GrantOf(c.Request().Context())
	return func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			if ok {
				n = grant.Scope.Relative(n)
			}
			out[i] = n
		}
		return out
	}
}

// groupStatus maps a group rule's refusal (a *domain.GroupError) to its
// status and code.
func groupStatus(err error) (int, string) {
	var gerr *domain.GroupError
	errors.As(err, &gerr)
	switch gerr.Code {
	case "unknown_member":
		return http.StatusNotFound, gerr.Code
	case "fenced":
		return http.StatusForbidden, gerr.Code
	case "illegal_generation", "rebalance_in_progress":
		return http.StatusConflict, gerr.Code
	case "capacity_exceeded":
		return http.StatusTooManyRequests, gerr.Code
	}
	return http.StatusBadRequest, codeBadRequest
}
