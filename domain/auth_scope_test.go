package domain

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// scopeAlphabet is tiny so that generated names and matcher values share
// prefixes often. outsideByte appears in no generated value, so a name
// ending in it is matched only by a prefix of what precedes it.
const (
	scopeAlphabet = "ab/"
	outsideByte   = "~"
)

// genScopeName draws a name over scopeAlphabet.
func genScopeName(maxLen int) *rapid.Generator[string] {
	return rapid.StringOfN(rapid.SampledFrom([]rune(scopeAlphabet)), 0, maxLen, -1)
}

// genMatcher draws a valid matcher: an exact matcher is never empty.
func genMatcher() *rapid.Generator[Matcher] {
	return rapid.Custom(func(t *rapid.T) Matcher {
		m := Matcher{Value: genScopeName(3).Draw(t, "value"), Prefix: rapid.Bool().Draw(t, "prefix")}
		if !m.Prefix && m.Value == "" {
			m.Value = "a"
		}
		return m
	})
}

func genMatchers() *rapid.Generator[Matchers] {
	return rapid.Custom(func(t *rapid.T) Matchers {
		return rapid.SliceOfN(genMatcher(), 0, 3).Draw(t, "matchers")
	})
}

// Expiries are drawn near expiryBase so that the times checked around
// them collide.
const expiryBase = 1_790_000_000_000

// genScope draws a scope that Validate accepts.
func genScope() *rapid.Generator[Scope] {
	return rapid.Custom(func(t *rapid.T) Scope {
		s := Scope{
			Streams:   genMatchers().Draw(t, "streams"),
			Tokens:    genMatchers().Draw(t, "tokens"),
			Groups:    rapid.Uint8Range(0, 1<<numGroups-1).Draw(t, "groups"),
			Ops:       rapid.Uint32Range(0, 1<<numOps-1).Draw(t, "ops"),
			Audiences: rapid.Uint8Range(1, 1<<numAudiences-1).Draw(t, "audiences"),
		}
		if s.Groups == 0 && s.Ops == 0 {
			s.Ops = 1 << rapid.SampledFrom(Ops()).Draw(t, "op")
		}
		if rapid.Bool().Draw(t, "auto") {
			s.AutoPrefixStreams = true
			s.Streams = Matchers{{Value: "/" + genScopeName(2).Draw(t, "auto prefix") + "/", Prefix: true}}
		}
		if rapid.Bool().Draw(t, "expires") {
			s.Expires, s.ExpiresAtMs = true, expiryBase+rapid.Int64Range(-5, 5).Draw(t, "expiry")
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("generated an invalid scope %+v: %v", s, err)
		}
		return s
	})
}

// within draws a child built to lie within p: matchers extending p's,
// subsets of its grants, an expiry no later than its.
func within(t *rapid.T, p Scope) Scope {
	c := Scope{
		Streams:   narrowMatchers(t, "streams", p.Streams),
		Tokens:    narrowMatchers(t, "tokens", p.Tokens),
		Groups:    p.Groups & rapid.Uint8().Draw(t, "group mask"),
		Audiences: p.Audiences & rapid.Uint8().Draw(t, "audience mask"),
	}
	var held uint32
	for _, op := range Ops() {
		if p.HasOp(op) {
			held |= 1 << op
		}
	}
	c.Ops = held & rapid.Uint32().Draw(t, "op mask")
	if c.Groups == 0 && c.Ops == 0 {
		c.Ops = held & -held // the lowest op p holds
	}
	if c.Audiences == 0 {
		c.Audiences = p.Audiences & -p.Audiences
	}
	if p.AutoPrefixStreams || rapid.Bool().Draw(t, "auto") {
		// An auto-prefixed child needs one prefix of the form /…/ within p.
		for _, m := range p.Streams {
			if m.Prefix && (m.Value == "" || strings.HasPrefix(m.Value, "/")) {
				v := m.Value + genScopeName(2).Draw(t, "auto extension") + "/"
				if !strings.HasPrefix(v, "/") {
					v = "/" + v
				}
				c.AutoPrefixStreams, c.Streams = true, Matchers{{Value: v, Prefix: true}}
				break
			}
		}
	}
	if p.Expires || rapid.Bool().Draw(t, "expires") {
		c.Expires, c.ExpiresAtMs = true, expiryBase+rapid.Int64Range(-5, 5).Draw(t, "expiry")
		if p.Expires {
			c.ExpiresAtMs = p.ExpiresAtMs - rapid.Int64Range(0, 5).Draw(t, "earlier by")
		}
	}
	return c
}

// narrowMatchers draws matchers each within one of ps.
func narrowMatchers(t *rapid.T, label string, ps Matchers) Matchers {
	if len(ps) == 0 {
		return nil
	}
	n := rapid.IntRange(0, 3).Draw(t, label+" count")
	var ms Matchers
	for range n {
		p := rapid.SampledFrom(ps).Draw(t, label+" parent")
		if !p.Prefix {
			ms = append(ms, p)
			continue
		}
		m := Matcher{Value: p.Value + genScopeName(2).Draw(t, label+" extension"), Prefix: rapid.Bool().Draw(t, label+" prefix")}
		if m.Value == "" {
			m.Prefix = true
		}
		ms = append(ms, m)
	}
	return ms
}

// widen applies one random change that may or may not widen c.
func widen(t *rapid.T, c Scope) Scope {
	c.Streams = append(Matchers(nil), c.Streams...)
	c.Tokens = append(Matchers(nil), c.Tokens...)
	switch rapid.IntRange(0, 9).Draw(t, "widening") {
	case 0:
		c.Streams = append(c.Streams, genMatcher().Draw(t, "extra stream"))
		c.AutoPrefixStreams = c.AutoPrefixStreams && rapid.Bool().Draw(t, "keep auto")
	case 1:
		c.Tokens = append(c.Tokens, genMatcher().Draw(t, "extra token"))
	case 2:
		c.Groups |= 1 << rapid.IntRange(0, int(numGroups)-1).Draw(t, "extra group")
	case 3:
		c.Ops |= 1 << rapid.SampledFrom(Ops()).Draw(t, "extra op")
	case 4:
		c.Audiences |= 1 << rapid.IntRange(0, int(numAudiences)-1).Draw(t, "extra audience")
	case 5:
		c.Expires = false
	case 6:
		c.ExpiresAtMs += rapid.Int64Range(1, 5).Draw(t, "later by")
	case 7:
		c.AutoPrefixStreams = false
	case 8:
		// Shorten a prefix: wider unless another matcher still covers it.
		for i, m := range c.Streams {
			if m.Prefix && m.Value != "" {
				c.Streams[i].Value = m.Value[:len(m.Value)-1]
				break
			}
		}
	case 9:
		c = genScope().Draw(t, "unrelated child")
	}
	return c
}

// bruteNames is every string over alphabet of up to maxLen bytes.
func bruteNames(alphabet string, maxLen int) []string {
	names := []string{""}
	for level := []string{""}; maxLen > 0; maxLen-- {
		var next []string
		for _, s := range level {
			for i := range len(alphabet) {
				next = append(next, s+alphabet[i:i+1])
			}
		}
		names = append(names, next...)
		level = next
	}
	return names
}

// probeNames is the brute-force set and, for each matcher value, the value
// itself, one byte shorter and extended by in-alphabet and outside bytes.
func probeNames(alphabet string, maxLen int, sets ...Matchers) []string {
	names := bruteNames(alphabet, maxLen)
	for _, ms := range sets {
		for _, m := range ms {
			names = append(names, m.Value, m.Value+outsideByte, m.Value+"a"+outsideByte, m.Value+"/x")
			if m.Value != "" {
				names = append(names, m.Value[:len(m.Value)-1])
			}
		}
	}
	return names
}

// probeTimes are the instants around each scope's expiry, and far off.
func probeTimes(scopes ...Scope) []int64 {
	times := []int64{0, expiryBase - 100, expiryBase + 100}
	for _, s := range scopes {
		times = append(times, s.ExpiresAtMs-1, s.ExpiresAtMs, s.ExpiresAtMs+1)
	}
	return times
}

// checkNoWider fails when child allows a request parent refuses, over
// every operation, every audience (and one unknown), every probe name and
// time.
func checkNoWider(t *rapid.T, parent, child Scope) {
	names := probeNames(scopeAlphabet, 4, parent.Streams, parent.Tokens, child.Streams, child.Tokens)
	times := probeTimes(parent, child)
	for _, op := range Ops() {
		for aud := range numAudiences + 1 {
			for _, name := range names {
				for _, now := range times {
					if child.Allows(op, aud, name, now) && !parent.Allows(op, aud, name, now) {
						t.Fatalf("child allows %s %q at %s, %d, which the parent denies (%s)\nparent %+v\nchild  %+v",
							op, name, aud, now, parent.Check(op, aud, name, now), parent, child)
					}
				}
			}
		}
	}
}

// TestNarrowsIsSound: a child Narrows accepts never allows what its parent
// does not, whether it was built within the parent, widened after, or
// unrelated.
func TestNarrowsIsSound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parent := genScope().Draw(t, "parent")
		child := within(t, parent)
		if rapid.Bool().Draw(t, "widen") {
			child = widen(t, child)
		}
		// A random request too, drawn as the brief's distributions.
		op := rapid.SampledFrom(Ops()).Draw(t, "op")
		aud := Audience(rapid.IntRange(0, int(numAudiences)).Draw(t, "audience"))
		name := genScopeName(5).Draw(t, "name")
		now := expiryBase + rapid.Int64Range(-8, 8).Draw(t, "now")
		if parent.Narrows(child) != nil || child.Validate() != nil {
			return
		}
		if child.Allows(op, aud, name, now) && !parent.Allows(op, aud, name, now) {
			t.Fatalf("child allows %s %q at %s, %d; parent denies", op, name, aud, now)
		}
		checkNoWider(t, parent, child)
		// Narrowing again stays within the parent: Narrows is transitive.
		grandchild := within(t, child)
		if child.Narrows(grandchild) == nil && grandchild.Validate() == nil && parent.Narrows(grandchild) != nil {
			t.Fatalf("parent refuses a grandchild its child accepts: %v\n%+v", parent.Narrows(grandchild), grandchild)
		}
	})
}

// TestNarrowsAcceptsWithin: Narrows is not vacuous: every child built
// within its parent is valid and accepted, and so is the parent itself.
func TestNarrowsAcceptsWithin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parent := genScope().Draw(t, "parent")
		if err := parent.Narrows(parent); err != nil {
			t.Fatalf("a scope does not narrow itself: %v\n%+v", err, parent)
		}
		child := within(t, parent)
		if err := child.Validate(); err != nil {
			t.Fatalf("child built within is invalid: %v\n%+v", err, child)
		}
		if err := parent.Narrows(child); err != nil {
			t.Fatalf("child built within is refused: %v\nparent %+v\nchild  %+v", err, parent, child)
		}
		if err := RootScope().Narrows(parent); err != nil {
			t.Fatalf("the root scope refuses %+v: %v", parent, err)
		}
	})
}

// TestNarrowsRefusesEachWidening: each single way of widening a child
// built within its parent is refused, with a message naming it.
func TestNarrowsRefusesEachWidening(t *testing.T) {
	parent := Scope{Streams: Matchers{{Value: "/t/", Prefix: true}}, Tokens: Matchers{{Value: "tok-1"}},
		Groups: 1 << GroupStreamRead, Ops: 1 << OpAppend, Audiences: 1 << AudiencePico,
		AutoPrefixStreams: true, Expires: true, ExpiresAtMs: 100}
	child := parent
	if err := parent.Narrows(child); err != nil {
		t.Fatalf("the parent refuses itself: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		widen      func(*Scope)
	}{
		{"shorter stream prefix", "stream matchers", func(s *Scope) { s.Streams = Matchers{{Value: "/", Prefix: true}} }},
		{"sibling stream prefix", "stream matchers", func(s *Scope) { s.Streams = Matchers{{Value: "/u/", Prefix: true}} }},
		{"exact token as prefix", "token matchers", func(s *Scope) { s.Tokens = Matchers{{Value: "tok-1", Prefix: true}} }},
		{"other token", "token matchers", func(s *Scope) { s.Tokens = Matchers{{Value: "tok-2"}} }},
		{"group", "group", func(s *Scope) { s.Groups |= 1 << GroupStreamWrite }},
		{"fine op", "delete", func(s *Scope) { s.Ops |= 1 << OpDelete }},
		{"audience", "audience", func(s *Scope) { s.Audiences |= 1 << AudienceAdmin }},
		{"no expiry", "must expire", func(s *Scope) { s.Expires = false }},
		{"later expiry", "expires after", func(s *Scope) { s.ExpiresAtMs++ }},
		{"not auto-prefixed", "auto-prefixed", func(s *Scope) { s.AutoPrefixStreams = false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := child
			tc.widen(&c)
			err := parent.Narrows(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Narrows = %v, want an error about %q", err, tc.want)
			}
		})
	}
}

// TestNarrowsGroupsAndOps is the group/fine-op rule over every operation:
// a parent group covers child fine ops in it, a fine op covers only
// itself, and fine ops never cover a child group, not even all of them.
func TestNarrowsGroupsAndOps(t *testing.T) {
	base := Scope{Streams: Matchers{{Prefix: true}}, Tokens: Matchers{{Prefix: true}}, Audiences: 1 << AudiencePico}
	with := func(groups uint8, ops uint32) Scope {
		s := base
		s.Groups, s.Ops = groups, ops
		return s
	}
	for _, op := range Ops() {
		for g := range numGroups {
			err := with(1<<g, 0).Narrows(with(0, 1<<op))
			if (err == nil) != (op.Group() == g) {
				t.Errorf("group %d over fine op %s: %v", g, op, err)
			}
		}
		for _, other := range Ops() {
			err := with(0, 1<<op).Narrows(with(0, 1<<other))
			if (err == nil) != (op == other) {
				t.Errorf("fine op %s over fine op %s: %v", op, other, err)
			}
		}
	}
	for g := range numGroups {
		var all uint32
		for _, op := range Ops() {
			if op.Group() == g {
				all |= 1 << op
			}
		}
		if all == 0 {
			t.Fatalf("group %d holds no operation", g)
		}
		if err := with(0, all).Narrows(with(1<<g, 0)); err == nil {
			t.Errorf("every fine op of group %d covers the group", g)
		}
		if err := with(1<<g, 0).Narrows(with(1<<g, all)); err != nil {
			t.Errorf("group %d does not cover itself with its fine ops: %v", g, err)
		}
	}
}

// uncovered reports the first name child matches and ms does not.
func uncovered(ms, child Matchers, names []string) (string, bool) {
	for _, n := range names {
		if child.Matches(n) && !ms.Matches(n) {
			return n, true
		}
	}
	return "", false
}

// TestCoversAgainstBruteForce: Covers is sound (every name a covered child
// matches, the parent matches), and on these values, where a byte outside
// every value exists, complete too: a refused child has a witness name.
// Covers of a set is Covers of each matcher.
func TestCoversAgainstBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]string{"ab", scopeAlphabet}).Draw(t, "alphabet")
		gm := rapid.Custom(func(t *rapid.T) Matcher {
			return Matcher{Value: rapid.StringOfN(rapid.SampledFrom([]rune(alphabet)), 0, 3, -1).Draw(t, "value"),
				Prefix: rapid.Bool().Draw(t, "prefix")}
		})
		ms := rapid.SliceOfN(gm, 0, 4).Draw(t, "parent")
		child := rapid.SliceOfN(gm, 0, 3).Draw(t, "child")
		if rapid.Bool().Draw(t, "child from parent") && len(ms) > 0 {
			// Bias towards children related to the parent.
			p := rapid.SampledFrom(ms).Draw(t, "base")
			child = append(child, Matcher{Value: p.Value + rapid.StringOfN(rapid.SampledFrom([]rune(alphabet)), 0, 2, -1).Draw(t, "ext"),
				Prefix: rapid.Bool().Draw(t, "ext prefix")})
		}
		names := probeNames(alphabet, 4, ms, child)
		name, wider := uncovered(Matchers(ms), child, names)
		if got := Matchers(ms).Covers(child); got == wider {
			if got {
				t.Fatalf("%v covers %v, but %q is matched only by the child", ms, child, name)
			}
			t.Fatalf("%v refuses %v, but no name tells them apart", ms, child)
		}
		each := true
		for _, c := range child {
			each = each && Matchers(ms).Covers(Matchers{c})
		}
		if each != Matchers(ms).Covers(child) {
			t.Fatalf("Covers(%v) is not Covers of each matcher", child)
		}
	})
}

func TestCoversSimpleCases(t *testing.T) {
	logs := Matchers{{Value: "/logs/", Prefix: true}}
	for _, tc := range []struct {
		parent, child Matchers
		want          bool
	}{
		{logs, logs, true},
		{logs, nil, true},
		{nil, nil, true},
		{nil, Matchers{{Value: "/x"}}, false},
		{logs, Matchers{{Value: "/logs", Prefix: true}}, false}, // a strictly wider prefix
		{logs, Matchers{{Value: "", Prefix: true}}, false},
		{logs, Matchers{{Value: "/logs/a/", Prefix: true}}, true},
		{logs, Matchers{{Value: "/logs/a"}}, true},
		{logs, Matchers{{Value: "/logs/"}}, true},
		{logs, Matchers{{Value: "/logs"}}, false},
		{logs, Matchers{{Value: "/logs/a"}, {Value: "/other"}}, false},
		{Matchers{{Value: "/a"}}, Matchers{{Value: "/a"}}, true},
		{Matchers{{Value: "/a"}}, Matchers{{Value: "/a", Prefix: true}}, false},
		{Matchers{{Value: "/a"}}, Matchers{{Value: "/ab"}}, false},
		{Matchers{{Value: "", Prefix: true}}, Matchers{{Value: "", Prefix: true}, {Value: "x"}}, true},
	} {
		if got := tc.parent.Covers(tc.child); got != tc.want {
			t.Errorf("%v.Covers(%v) = %v, want %v", tc.parent, tc.child, got, tc.want)
		}
	}
}

// TestCoversIsIncomplete pins the documented limit: a prefix covered only
// by the union of several matchers (one per possible next byte, and the
// prefix itself) is refused.
func TestCoversIsIncomplete(t *testing.T) {
	ms := Matchers{{Value: "a"}}
	for b := range 256 {
		ms = append(ms, Matcher{Value: "a" + string([]byte{byte(b)}), Prefix: true})
	}
	child := Matchers{{Value: "a", Prefix: true}}
	for _, n := range []string{"a", "a\x00", "a\xff", "abc", "a~~"} {
		if !ms.Matches(n) {
			t.Fatalf("the union does not match %q", n)
		}
	}
	if ms.Covers(child) {
		t.Fatal("Covers proves a union covers a prefix; the doc says it does not try")
	}
}

func TestMatcherMatches(t *testing.T) {
	for _, tc := range []struct {
		m    Matcher
		name string
		want bool
	}{
		{Matcher{Value: "/a"}, "/a", true},
		{Matcher{Value: "/a"}, "/ab", false},
		{Matcher{Value: "/a"}, "/", false},
		{Matcher{Value: "/a", Prefix: true}, "/a", true},
		{Matcher{Value: "/a", Prefix: true}, "/ab", true},
		{Matcher{Value: "/a", Prefix: true}, "/", false},
		{Matcher{Prefix: true}, "", true},
		{Matcher{}, "", true},
		{Matcher{}, "x", false},
	} {
		if got := tc.m.Matches(tc.name); got != tc.want {
			t.Errorf("%+v.Matches(%q) = %v", tc.m, tc.name, got)
		}
	}
	if (Matchers{}).Matches("") || Matchers(nil).Matches("x") {
		t.Error("an empty matcher set matches")
	}
}

// TestOpTable pins every operation's name, group and resource: the names
// are the JSON form's and the groups decide what a group grant covers.
func TestOpTable(t *testing.T) {
	want := []struct {
		op    Op
		name  string
		group Group
		res   Resource
	}{
		{OpRead, "read", GroupStreamRead, ResourceStream},
		{OpHead, "head", GroupStreamRead, ResourceStream},
		{OpList, "list", GroupStreamRead, ResourceStream},
		{OpCreate, "create", GroupStreamWrite, ResourceStream},
		{OpAppend, "append", GroupStreamWrite, ResourceStream},
		{OpTrim, "trim", GroupStreamWrite, ResourceStream},
		{OpClose, "close", GroupStreamWrite, ResourceStream},
		{OpDelete, "delete", GroupStreamWrite, ResourceStream},
		{OpListTokens, "list_tokens", GroupTokensRead, ResourceToken},
		{OpIssueToken, "issue_token", GroupTokensWrite, ResourceToken},
		{OpRevokeToken, "revoke_token", GroupTokensWrite, ResourceToken},
		{OpClusterRead, "cluster_read", GroupAdminRead, ResourceCluster},
		{OpNodeRead, "node_read", GroupAdminRead, ResourceCluster},
		{OpStreamInspect, "stream_inspect", GroupAdminRead, ResourceCluster},
		{OpTransferStream, "transfer_stream", GroupAdminWrite, ResourceCluster},
		{OpUpdateNodeSlots, "update_node_slots", GroupAdminWrite, ResourceCluster},
		{OpDrainNode, "drain_node", GroupAdminWrite, ResourceCluster},
	}
	ops := Ops()
	if len(ops) != len(want) {
		t.Fatalf("Ops() has %d operations, want %d", len(ops), len(want))
	}
	for i, w := range want {
		if ops[i] != w.op || w.op.String() != w.name || w.op.Group() != w.group || w.op.Resource() != w.res {
			t.Errorf("op %d: %v %q group %d resource %d, want %v %q %d %d", i, ops[i], w.op.String(),
				w.op.Group(), w.op.Resource(), w.op, w.name, w.group, w.res)
		}
		if got, ok := ParseOp(w.name); !ok || got != w.op {
			t.Errorf("ParseOp(%q) = %v, %v", w.name, got, ok)
		}
	}
	for _, bad := range []string{"", "READ", "Read", "read ", "stream", "op(17)"} {
		if _, ok := ParseOp(bad); ok {
			t.Errorf("ParseOp(%q) accepted", bad)
		}
	}
	if got := Op(numOps).String(); got != "op(17)" {
		t.Errorf("unknown op prints %q", got)
	}
	if RootScope().HasOp(numOps) || RootScope().HasOp(255) {
		t.Error("HasOp grants an unknown operation")
	}
	for i, name := range []string{"pico", "durable_streams", "admin"} {
		if a, ok := ParseAudience(name); !ok || a != Audience(i) || a.String() != name {
			t.Errorf("audience %d: ParseAudience(%q) = %v, %v", i, name, a, ok)
		}
	}
	if _, ok := ParseAudience("Admin"); ok {
		t.Error(`ParseAudience("Admin") accepted`)
	}
	if got := numAudiences.String(); got != "audience(3)" {
		t.Errorf("unknown audience prints %q", got)
	}
}

// TestCheckOrder: Check names the first denial in the order expiry,
// audience, operation, resource, and an empty resource skips the matchers.
func TestCheckOrder(t *testing.T) {
	s := Scope{Streams: Matchers{{Value: "/logs/", Prefix: true}}, Tokens: Matchers{{Value: "t1"}},
		Groups: 1 << GroupStreamRead, Ops: 1 << OpRevokeToken, Audiences: 1 << AudiencePico, Expires: true, ExpiresAtMs: 100}
	for _, tc := range []struct {
		op   Op
		aud  Audience
		name string
		now  int64
		want Denial
	}{
		{OpRead, AudiencePico, "/logs/a", 99, DenyNone},
		{OpRead, AudiencePico, "/logs/a", 100, DenyExpired},
		{OpDelete, AudienceAdmin, "/x", 100, DenyExpired},
		{OpDelete, AudienceAdmin, "/x", 99, DenyAudience},
		{OpDelete, AudiencePico, "/x", 99, DenyOp},
		{OpRead, AudiencePico, "/x", 99, DenyResource},
		{OpRead, AudiencePico, "", 99, DenyNone},
		{OpList, AudiencePico, "", 99, DenyNone},
		{OpRevokeToken, AudiencePico, "t1", 99, DenyNone},
		{OpRevokeToken, AudiencePico, "/logs/a", 99, DenyResource}, // token ops use the token matchers
		{OpRevokeToken, AudiencePico, "t10", 99, DenyResource},
		{OpIssueToken, AudiencePico, "t1", 99, DenyOp},
	} {
		if got := s.Check(tc.op, tc.aud, tc.name, tc.now); got != tc.want {
			t.Errorf("Check(%s, %s, %q, %d) = %q, want %q", tc.op, tc.aud, tc.name, tc.now, got, tc.want)
		}
		if got := s.Allows(tc.op, tc.aud, tc.name, tc.now); got != (tc.want == DenyNone) {
			t.Errorf("Allows(%s, %s, %q, %d) = %v", tc.op, tc.aud, tc.name, tc.now, got)
		}
	}
	admin := Scope{Groups: 1 << GroupAdminWrite, Audiences: 1 << AudienceAdmin}
	if !admin.Allows(OpTransferStream, AudienceAdmin, "/any/stream", 0) {
		t.Error("an admin operation is checked against a matcher set")
	}
	if !RootScope().Allows(OpDelete, AudienceDurableStreams, "/x", 1<<62) {
		t.Error("the root scope denies")
	}
}

func TestValidate(t *testing.T) {
	ok := Scope{Ops: 1 << OpRead, Audiences: 1 << AudiencePico}
	if err := ok.Validate(); err != nil {
		t.Fatalf("minimal scope: %v", err)
	}
	if err := RootScope().Validate(); err != nil {
		t.Fatalf("root scope: %v", err)
	}
	long := strings.Repeat("x", MaxMatcherLen)
	many := make(Matchers, MaxMatchers)
	for i := range many {
		many[i] = Matcher{Value: "x"}
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Scope)
		valid bool
	}{
		{"no operation", func(s *Scope) { s.Ops = 0 }, false},
		{"group only", func(s *Scope) { s.Ops, s.Groups = 0, 1<<GroupAdminWrite }, true},
		{"no audience", func(s *Scope) { s.Audiences = 0 }, false},
		{"unknown group", func(s *Scope) { s.Groups = 1 << numGroups }, false},
		{"unknown op", func(s *Scope) { s.Ops |= 1 << numOps }, false},
		{"unknown audience", func(s *Scope) { s.Audiences |= 1 << numAudiences }, false},
		{"longest matcher", func(s *Scope) { s.Streams = Matchers{{Value: long}} }, true},
		{"matcher too long", func(s *Scope) { s.Tokens = Matchers{{Value: long + "x", Prefix: true}} }, false},
		{"empty exact", func(s *Scope) { s.Streams = Matchers{{}} }, false},
		{"empty prefix", func(s *Scope) { s.Streams = Matchers{{Prefix: true}} }, true},
		{"most matchers", func(s *Scope) { s.Tokens = many }, true},
		{"too many matchers", func(s *Scope) { s.Streams = append(many, Matcher{Value: "y"}) }, false},
		{"auto", func(s *Scope) { s.AutoPrefixStreams, s.Streams = true, Matchers{{Value: "/t/", Prefix: true}} }, true},
		{"auto root", func(s *Scope) { s.AutoPrefixStreams, s.Streams = true, Matchers{{Value: "/", Prefix: true}} }, true},
		{"auto none", func(s *Scope) { s.AutoPrefixStreams = true }, false},
		{"auto exact", func(s *Scope) { s.AutoPrefixStreams, s.Streams = true, Matchers{{Value: "/t/"}} }, false},
		{"auto two", func(s *Scope) {
			s.AutoPrefixStreams, s.Streams = true, Matchers{{Value: "/t/", Prefix: true}, {Value: "/u/", Prefix: true}}
		}, false},
		{"auto no slash", func(s *Scope) { s.AutoPrefixStreams, s.Streams = true, Matchers{{Value: "/t", Prefix: true}} }, false},
		{"auto relative", func(s *Scope) { s.AutoPrefixStreams, s.Streams = true, Matchers{{Value: "t/", Prefix: true}} }, false},
		{"auto empty", func(s *Scope) { s.AutoPrefixStreams, s.Streams = true, Matchers{{Prefix: true}} }, false},
	} {
		s := ok
		tc.edit(&s)
		if err := s.Validate(); (err == nil) != tc.valid {
			t.Errorf("%s: Validate = %v, want valid %v", tc.name, err, tc.valid)
		}
	}
}

// TestResolveRelative: an auto-prefixed scope maps every client name
// under its prefix, so the result is always one it allows, and Relative
// undoes it; without auto-prefixing both are the identity.
func TestResolveRelative(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScope().Draw(t, "scope")
		name := rapid.OneOf(genScopeName(6), rapid.String()).Draw(t, "name")
		stored := s.Resolve(name)
		if !s.AutoPrefixStreams {
			if stored != name || s.Relative(name) != name {
				t.Fatalf("not auto-prefixed, but Resolve(%q) = %q, Relative = %q", name, stored, s.Relative(name))
			}
			return
		}
		prefix := s.Streams[0].Value
		if !strings.HasPrefix(stored, prefix) || !s.Streams.Matches(stored) {
			t.Fatalf("Resolve(%q) = %q escapes the prefix %q", name, stored, prefix)
		}
		if got, want := s.Relative(stored), "/"+strings.TrimPrefix(name, "/"); got != want {
			t.Fatalf("Relative(Resolve(%q)) = %q, want %q", name, got, want)
		}
		under := prefix + genScopeName(4).Draw(t, "rest")
		if got := s.Resolve(s.Relative(under)); got != under {
			t.Fatalf("Resolve(Relative(%q)) = %q", under, got)
		}
	})
	s := Scope{Streams: Matchers{{Value: "/tenant/", Prefix: true}}, AutoPrefixStreams: true}
	for name, want := range map[string]string{"/a": "/tenant/a", "a": "/tenant/a", "/": "/tenant/",
		"": "/tenant/", "/tenant/a": "/tenant/tenant/a", "/../x": "/tenant/../x"} {
		if got := s.Resolve(name); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", name, got, want)
		}
	}
	if got := s.Relative("/tenant/a/b"); got != "/a/b" {
		t.Errorf("Relative = %q", got)
	}
}

func TestDenialStrings(t *testing.T) {
	seen := map[string]bool{}
	for d := DenyNone; d <= DenyResource; d++ {
		s := d.String()
		if s == "" || seen[s] {
			t.Errorf("denial %d prints %q", d, s)
		}
		seen[s] = true
	}
	if DenyNone.String() != "allowed" {
		t.Errorf("DenyNone prints %q", DenyNone.String())
	}
}

// TestRootScope pins what the root grants.
func TestRootScope(t *testing.T) {
	want := Scope{Streams: Matchers{{Prefix: true}}, Tokens: Matchers{{Prefix: true}}, Groups: 0x3f, Audiences: 0x7}
	if got := RootScope(); !reflect.DeepEqual(got, want) {
		t.Fatalf("RootScope() = %+v", got)
	}
}
