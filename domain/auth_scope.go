package domain

import (
	"errors"
	"fmt"
	"strings"
)

// Op is one fine operation a scope may grant. Each belongs to one Group,
// and a scope holding the group holds every operation in it, including
// operations added to it later.
type Op uint8

// The fine operations, in their groups.
const (
	OpRead Op = iota // stream read
	OpHead
	OpList
	OpCreate // stream write
	OpAppend
	OpTrim
	OpClose
	OpDelete
	OpListTokens  // tokens read
	OpIssueToken  // tokens write
	OpRevokeToken //
	OpClusterRead // admin read
	OpNodeRead
	OpStreamInspect
	OpTransferStream // admin write
	OpUpdateNodeSlots
	OpDrainNode
	numOps
)

// Group is a coarse read or write group over one resource kind.
type Group uint8

// The six groups.
const (
	GroupStreamRead Group = iota
	GroupStreamWrite
	GroupTokensRead
	GroupTokensWrite
	GroupAdminRead
	GroupAdminWrite
	numGroups
)

// Resource is the kind of thing an operation acts on, which says which
// matcher set of a scope applies to its resource name.
type Resource uint8

// The resource kinds.
const (
	ResourceStream Resource = iota
	ResourceToken
	ResourceCluster // admin operations: no matcher set applies
)

var opNames = [numOps]string{"read", "head", "list", "create", "append", "trim", "close", "delete",
	"list_tokens", "issue_token", "revoke_token", "cluster_read", "node_read", "stream_inspect",
	"transfer_stream", "update_node_slots", "drain_node"}

var opGroups = [numOps]Group{GroupStreamRead, GroupStreamRead, GroupStreamRead,
	GroupStreamWrite, GroupStreamWrite, GroupStreamWrite, GroupStreamWrite, GroupStreamWrite,
	GroupTokensRead, GroupTokensWrite, GroupTokensWrite,
	GroupAdminRead, GroupAdminRead, GroupAdminRead, GroupAdminWrite, GroupAdminWrite, GroupAdminWrite}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Group is the group that covers o.
func (o Op) Group() Group { return opGroups[o] }

// Resource is the kind of resource o acts on.
func (o Op) Resource() Resource { return Resource(o.Group() / 2) }

// Ops lists every fine operation, in order.
func Ops() []Op {
	ops := make([]Op, numOps)
	for i := range ops {
		ops[i] = Op(i)
	}
	return ops
}

// ParseOp reads an operation's JSON name.
func ParseOp(name string) (Op, bool) {
	for i, n := range opNames {
		if n == name {
			return Op(i), true
		}
	}
	return 0, false
}

// Audience is the listener a credential may be presented to.
type Audience uint8

// The audiences.
const (
	AudiencePico Audience = iota
	AudienceDurableStreams
	AudienceAdmin
	numAudiences
)

var audienceNames = [numAudiences]string{"pico", "durable_streams", "admin"}

func (a Audience) String() string {
	if a < numAudiences {
		return audienceNames[a]
	}
	return fmt.Sprintf("audience(%d)", uint8(a))
}

// ParseAudience reads an audience's JSON name.
func ParseAudience(name string) (Audience, bool) {
	for i, n := range audienceNames {
		if n == name {
			return Audience(i), true
		}
	}
	return 0, false
}

// Matcher matches one name exactly, or every name that starts with Value.
type Matcher struct {
	Value  string
	Prefix bool
}

// Matches reports whether m matches name.
func (m Matcher) Matches(name string) bool {
	if m.Prefix {
		return strings.HasPrefix(name, m.Value)
	}
	return name == m.Value
}

// Matchers is a set of matchers: a name is in the set when any matches it.
// An empty set matches nothing.
type Matchers []Matcher

// Matches reports whether any matcher matches name.
func (ms Matchers) Matches(name string) bool {
	for _, m := range ms {
		if m.Matches(name) {
			return true
		}
	}
	return false
}

// Covers reports whether every name child matches, ms matches too. It is
// sound, never complete: each child matcher must lie within one matcher of
// ms, so a prefix covered only by the union of several is refused.
func (ms Matchers) Covers(child Matchers) bool {
	for _, c := range child {
		if !ms.coversOne(c) {
			return false
		}
	}
	return true
}

func (ms Matchers) coversOne(c Matcher) bool {
	for _, m := range ms {
		if m.Prefix && strings.HasPrefix(c.Value, m.Value) || !c.Prefix && m.Matches(c.Value) {
			return true
		}
	}
	return false
}

// Scope is what a token may do: on which resources (matcher sets of
// stream names and of token ids), which operations (groups and fine
// operations), at which listeners (audiences) and until when. Missing
// grants deny.
type Scope struct {
	Streams, Tokens Matchers
	Groups          uint8  // bit g: Group g
	Ops             uint32 // bit o: fine operation o
	Audiences       uint8  // bit a: Audience a
	// AutoPrefixStreams makes client stream names relative to the one
	// stream prefix of the scope (Resolve).
	AutoPrefixStreams bool
	// ExpiresAtMs is the expiry in Unix milliseconds when Expires.
	ExpiresAtMs int64
	Expires     bool
}

// RootScope grants everything: every stream, every token id, every
// operation and audience, no expiry.
func RootScope() Scope {
	return Scope{Streams: Matchers{{Prefix: true}}, Tokens: Matchers{{Prefix: true}},
		Groups: 1<<numGroups - 1, Audiences: 1<<numAudiences - 1}
}

// HasOp reports whether s grants op, through its group or by name.
func (s Scope) HasOp(op Op) bool {
	return op < numOps && (s.Groups&(1<<op.Group()) != 0 || s.Ops&(1<<op) != 0)
}

// HasAudience reports whether s may be presented to a.
func (s Scope) HasAudience(a Audience) bool { return s.Audiences&(1<<a) != 0 }

// Expired reports whether s has expired at nowMs.
func (s Scope) Expired(nowMs int64) bool { return s.Expires && nowMs >= s.ExpiresAtMs }

// Denial says why a scope refuses a request.
type Denial uint8

// The denials; DenyNone allows.
const (
	DenyNone Denial = iota
	DenyExpired
	DenyAudience
	DenyOp
	DenyResource
)

func (d Denial) String() string {
	return [...]string{"allowed", "the token has expired", "the token is not valid for this listener",
		"the token does not grant this operation", "the token does not cover this resource"}[d]
}

// Check says whether s allows op on resource at audience aud at nowMs. An
// empty resource names none (a listing, or a request whose resource is in
// its body): the matcher sets are then the caller's to apply.
func (s Scope) Check(op Op, aud Audience, resource string, nowMs int64) Denial {
	switch {
	case s.Expired(nowMs):
		return DenyExpired
	case !s.HasAudience(aud):
		return DenyAudience
	case !s.HasOp(op):
		return DenyOp
	case resource != "" && !s.covers(op.Resource(), resource):
		return DenyResource
	}
	return DenyNone
}

// Allows reports whether Check finds nothing to deny.
func (s Scope) Allows(op Op, aud Audience, resource string, nowMs int64) bool {
	return s.Check(op, aud, resource, nowMs) == DenyNone
}

func (s Scope) covers(kind Resource, name string) bool {
	switch kind {
	case ResourceStream:
		return s.Streams.Matches(name)
	case ResourceToken:
		return s.Tokens.Matches(name)
	}
	return true
}

// MaxMatchers bounds each matcher set of a scope; MaxMatcherLen bounds
// one matcher's value.
const (
	MaxMatchers   = 256
	MaxMatcherLen = 1024
)

// Validate checks what a scope must be to be issued: some operation and
// some audience, bounded matchers, and for AutoPrefixStreams exactly one
// stream matcher, a prefix ending in "/".
func (s Scope) Validate() error {
	switch {
	case s.Groups == 0 && s.Ops == 0:
		return errors.New("the scope grants no operation")
	case s.Audiences == 0:
		return errors.New("the scope names no audience")
	case s.Groups >= 1<<numGroups || s.Ops >= 1<<numOps || s.Audiences >= 1<<numAudiences:
		return errors.New("the scope names unknown operations or audiences")
	case s.AutoPrefixStreams && (len(s.Streams) != 1 || !s.Streams[0].Prefix || !strings.HasPrefix(s.Streams[0].Value, "/") || !strings.HasSuffix(s.Streams[0].Value, "/")):
		return errors.New("autoPrefixStreams needs exactly one stream matcher, a prefix that starts and ends with /")
	}
	for _, ms := range []Matchers{s.Streams, s.Tokens} {
		if len(ms) > MaxMatchers {
			return fmt.Errorf("a matcher set holds at most %d matchers", MaxMatchers)
		}
		for _, m := range ms {
			if len(m.Value) > MaxMatcherLen || !m.Prefix && m.Value == "" {
				return fmt.Errorf("a matcher is 1 to %d bytes (a prefix may be empty)", MaxMatcherLen)
			}
		}
	}
	return nil
}

// Narrows returns nil when child grants nothing s does not: its matchers
// lie within s's, its operations and audiences are s's, and it expires no
// later than s. A group of s covers child fine operations in it; fine
// operations of s never cover a child group. A child of an auto-prefixed
// scope is auto-prefixed too. The error says what would widen.
func (s Scope) Narrows(child Scope) error {
	switch {
	case !s.Streams.Covers(child.Streams):
		return errors.New("its stream matchers reach beyond the issuer's")
	case !s.Tokens.Covers(child.Tokens):
		return errors.New("its token matchers reach beyond the issuer's")
	case child.Groups&^s.Groups != 0:
		return errors.New("it names an operation group the issuer lacks")
	case child.Audiences&^s.Audiences != 0:
		return errors.New("it names an audience the issuer lacks")
	case s.Expires && !child.Expires:
		return errors.New("the issuer expires, so the token must expire too")
	case s.Expires && child.ExpiresAtMs > s.ExpiresAtMs:
		return errors.New("it expires after the issuer")
	case s.AutoPrefixStreams && !child.AutoPrefixStreams:
		return errors.New("the issuer is auto-prefixed, so the token must be too")
	}
	for op := range numOps {
		if child.Ops&(1<<op) != 0 && !s.HasOp(op) {
			return fmt.Errorf("it grants %s, which the issuer lacks", op)
		}
	}
	return nil
}

// Resolve turns a client's stream name into the stored one: with
// AutoPrefixStreams every name lies under the scope's prefix (a name
// outside it is taken as relative too, so there is no way out).
func (s Scope) Resolve(name string) string {
	if !s.AutoPrefixStreams {
		return name
	}
	return s.Streams[0].Value + strings.TrimPrefix(name, "/")
}

// Relative turns a stored name under an auto-prefixed scope back into the
// client's: the prefix replaced by "/".
func (s Scope) Relative(stored string) string {
	if !s.AutoPrefixStreams {
		return stored
	}
	return "/" + strings.TrimPrefix(stored, s.Streams[0].Value)
}
