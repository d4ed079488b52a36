package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/picomq/pico/adapters/adminclient"
	"github.com/picomq/pico/domain"
)

// issueFlags are the scope flags of admin tokens issue: --scope, or the
// flags that build the common scopes.
type issueFlags struct {
	scope            string
	prefixes, exacts listFlag
	read, write      bool
	ops, audiences   listFlag
	expires          time.Duration
	autoPrefix       bool
	built            []string // the names of the flags that build a scope
}

func (f *issueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scope, "scope", "", "tokens issue: the scope's JSON, or @FILE holding it")
	fs.Var(&f.prefixes, "prefix", "tokens issue: a stream prefix the token covers (repeatable)")
	fs.Var(&f.exacts, "exact", "tokens issue: a stream name the token covers (repeatable)")
	fs.BoolVar(&f.read, "read", false, "tokens issue: grant the stream read group (read, head, list)")
	fs.BoolVar(&f.write, "write", false, "tokens issue: grant the stream write group (create, append, trim, close, delete)")
	fs.Var(&f.ops, "ops", "tokens issue: fine operations, comma separated: "+strings.Join(opNames(), ","))
	fs.Var(&f.audiences, "audience", "tokens issue: listeners the token is for, comma separated or repeated: pico, durable_streams, admin (default pico,durable_streams)")
	fs.DurationVar(&f.expires, "expires", 0, "tokens issue: expire this long from now, e.g. 24h (default: never)")
	fs.BoolVar(&f.autoPrefix, "auto-prefix", false, "tokens issue: stream names are relative to the token's one --prefix")
	f.built = []string{"prefix", "exact", "read", "write", "ops", "audience", "expires", "auto-prefix"}
}

// checkIssueFlags refuses scope flags outside tokens issue, and --scope
// with the flags that build one; issue needs one or the other.
func (c *adminCommand) checkIssueFlags(issuing bool) error {
	scopeGiven, builtGiven := c.given("scope"), "" // builtGiven: the first one given
	for _, name := range c.issue.built {
		if c.given(name) && builtGiven == "" {
			builtGiven = name
		}
	}
	switch {
	case !issuing && scopeGiven:
		return c.usageError("--scope goes with tokens issue")
	case !issuing && builtGiven != "":
		return c.usageError("--" + builtGiven + " goes with tokens issue")
	case scopeGiven && builtGiven != "":
		return c.usageError(fmt.Sprintf("--scope and --%s exclude each other: put it in the scope's JSON", builtGiven))
	case issuing && !scopeGiven && builtGiven == "":
		return c.usageError("tokens issue needs a scope: --scope JSON, or --prefix/--exact with --read, --write or --ops")
	}
	return nil
}

// listFlag is a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// items splits each value at its commas.
func (l listFlag) items() []string {
	var out []string
	for _, v := range l {
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

func opNames() []string {
	var names []string
	for _, op := range domain.Ops() {
		names = append(names, op.String())
	}
	return names
}

// scope is the scope to issue: --scope's, or the one the flags build.
// It is checked here, so that a scope the listener would refuse as
// malformed is refused before the request.
func (c *adminCommand) scope(now time.Time) (domain.Scope, error) {
	var s domain.Scope
	var err error
	if c.given("scope") {
		s, err = c.issue.scopeJSON()
	} else {
		s, err = c.issue.build(now)
	}
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return domain.Scope{}, c.usageError("tokens issue: " + err.Error())
	}
	return s, nil
}

// scopeJSON reads --scope: JSON, or @FILE.
func (f *issueFlags) scopeJSON() (domain.Scope, error) {
	text := []byte(f.scope)
	if path, ok := strings.CutPrefix(f.scope, "@"); ok {
		var err error
		if text, err = os.ReadFile(path); err != nil {
			return domain.Scope{}, fmt.Errorf("--scope: %w", err)
		}
	}
	s, err := domain.ParseScope(text)
	if err != nil {
		return domain.Scope{}, fmt.Errorf("--scope: %w", err)
	}
	return s, nil
}

// build makes the scope of the flags.
func (f *issueFlags) build(now time.Time) (domain.Scope, error) {
	s := domain.Scope{AutoPrefixStreams: f.autoPrefix}
	for _, p := range f.prefixes {
		s.Streams = append(s.Streams, domain.Matcher{Value: p, Prefix: true})
	}
	for _, name := range f.exacts {
		s.Streams = append(s.Streams, domain.Matcher{Value: name})
	}
	if f.read {
		s.Groups |= 1 << domain.GroupStreamRead
	}
	if f.write {
		s.Groups |= 1 << domain.GroupStreamWrite
	}
	for _, name := range f.ops.items() {
		op, ok := domain.ParseOp(name)
		if !ok {
			return domain.Scope{}, fmt.Errorf("--ops: unknown operation %q (want %s)", name, strings.Join(opNames(), ", "))
		}
		s.Ops |= 1 << op
	}
	audiences := f.audiences.items()
	if len(audiences) == 0 {
		audiences = []string{domain.AudiencePico.String(), domain.AudienceDurableStreams.String()}
	}
	for _, name := range audiences {
		a, ok := domain.ParseAudience(name)
		if !ok {
			return domain.Scope{}, fmt.Errorf("--audience: unknown audience %q (want pico, durable_streams or admin)", name)
		}
		s.Audiences |= 1 << a
	}
	if f.expires < 0 {
		return domain.Scope{}, errors.New("--expires must be above 0")
	}
	if f.expires > 0 {
		s.Expires, s.ExpiresAtMs = true, now.Add(f.expires).UnixMilli()
	}
	if len(s.Streams) == 0 && grantsStreamOps(s) {
		return domain.Scope{}, errors.New(`the token would reach no stream: give --prefix P or --exact NAME (--prefix "" for every stream)`)
	}
	return s, nil
}

// grantsStreamOps reports whether s grants an operation on streams, which
// a scope without stream matchers can never use.
func grantsStreamOps(s domain.Scope) bool {
	for _, op := range domain.Ops() {
		if op.Resource() == domain.ResourceStream && s.HasOp(op) {
			return true
		}
	}
	return false
}

func adminTokens(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	client, err := c.client()
	if err != nil {
		return err
	}
	tokens, err := client.Tokens(ctx)
	if err != nil {
		return err
	}
	return c.print(stdout, tokens, func(w io.Writer) { c.tokenTable(w, tokens.Tokens, time.Now()) })
}

func (c *adminCommand) tokenTable(w io.Writer, tokens []adminclient.Token, now time.Time) {
	fmt.Fprintln(w, "ID\tISSUER\tAUDIENCES\tOPERATIONS\tSTREAMS\tEXPIRES")
	for _, t := range tokens {
		issuer := t.Issuer
		if issuer == "" {
			issuer = "-" // a bootstrap token
		}
		s, err := domain.ParseScope(t.Scope)
		if err != nil {
			// A newer server's scope, say: --json shows it whole.
			fmt.Fprintf(c.stderr, "pico: token %s: cannot read its scope (%v); --json shows it\n", t.ID, err)
			fmt.Fprintf(w, "%s\t%s\t?\t?\t?\t?\n", t.ID, issuer)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, issuer, audiencesText(s), operationsText(s), streamsText(s), expiryText(s, now))
	}
}

// groupNames name the groups as the table shows them.
var groupNames = map[domain.Group]string{
	domain.GroupStreamRead: "stream:read", domain.GroupStreamWrite: "stream:write",
	domain.GroupTokensRead: "tokens:read", domain.GroupTokensWrite: "tokens:write",
	domain.GroupAdminRead: "admin:read", domain.GroupAdminWrite: "admin:write",
}

// operationsText is the groups, then the fine operations no group of s
// covers already.
func operationsText(s domain.Scope) string {
	var parts []string
	for _, g := range []domain.Group{domain.GroupStreamRead, domain.GroupStreamWrite, domain.GroupTokensRead,
		domain.GroupTokensWrite, domain.GroupAdminRead, domain.GroupAdminWrite} {
		if s.Groups&(1<<g) != 0 {
			parts = append(parts, groupNames[g])
		}
	}
	for _, op := range domain.Ops() {
		if s.Ops&(1<<op) != 0 && s.Groups&(1<<op.Group()) == 0 {
			parts = append(parts, op.String())
		}
	}
	return joinOrDash(parts)
}

func audiencesText(s domain.Scope) string {
	var parts []string
	for _, a := range []domain.Audience{domain.AudiencePico, domain.AudienceDurableStreams, domain.AudienceAdmin} {
		if s.HasAudience(a) {
			parts = append(parts, a.String())
		}
	}
	return joinOrDash(parts)
}

// streamsText lists the stream matchers, a prefix as P*.
func streamsText(s domain.Scope) string {
	var parts []string
	for _, m := range s.Streams {
		if m.Prefix {
			parts = append(parts, m.Value+"*")
		} else {
			parts = append(parts, m.Value)
		}
	}
	text := joinOrDash(parts)
	if s.AutoPrefixStreams {
		text += " (auto-prefix)"
	}
	return text
}

func expiryText(s domain.Scope, now time.Time) string {
	if !s.Expires {
		return "never"
	}
	text := time.UnixMilli(s.ExpiresAtMs).UTC().Format(time.RFC3339)
	if s.Expired(now.UnixMilli()) {
		text += " (expired)"
	}
	return text
}

func joinOrDash(parts []string) string {
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// adminIssueToken prints the issued token alone on stdout, so that a shell
// can capture it, and what it grants on stderr.
func adminIssueToken(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	id := c.args[0]
	if !domain.ValidTokenID(id) {
		return c.usageError(fmt.Sprintf("token id %.100q: want 1 to %d printable characters without spaces", id, domain.MaxTokenIDLen))
	}
	scope, err := c.scope(time.Now())
	if err != nil {
		return err
	}
	client, err := c.client()
	if err != nil {
		return err
	}
	issued, err := client.IssueToken(ctx, id, scope)
	if err != nil {
		return err
	}
	if issued.Wire == "" {
		return fmt.Errorf("the listener issued token %s but sent no token back", id)
	}
	if c.asJSON {
		return c.print(stdout, issued, nil)
	}
	if _, err := fmt.Fprintln(stdout, issued.Wire); err != nil {
		return err
	}
	if stored, err := domain.ParseScope(issued.Scope); err == nil {
		scope = stored // the scope as the listener recorded it
	}
	fmt.Fprintf(c.stderr, "issued token %s, shown this once: audiences %s; operations %s; streams %s; expires %s\n",
		id, audiencesText(scope), operationsText(scope), streamsText(scope), expiryText(scope, time.Now()))
	return nil
}

func adminRevokeToken(ctx context.Context, c *adminCommand, _ io.Writer) error {
	client, err := c.client()
	if err != nil {
		return err
	}
	if err := client.RevokeToken(ctx, c.args[0]); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "revoked token %s\n", c.args[0])
	return nil
}
