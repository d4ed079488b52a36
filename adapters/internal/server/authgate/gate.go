// Package authgate is the one check in front of every listener: each
// request's credential and the operation it asks for, decided by the
// node's ports.Authorizer before the listener routes, redirects or reads a
// body. Each listener declares, next to its routes, which operation each
// route is (a Route), and renders the gate's errors in its own format.
//
// The gate puts the grant in the request's context wherever a handler may
// ask for it (a request on one stream under a plain scope is served alike
// under any grant, and carries none): auto-prefixed names resolve from it
// (streamroute.StreamName), listings filter by it, admin and token routes
// decide by it, and a live read holds it (ports.Authorizer.Hold), so that
// the authorizer ends the read once the grant no longer holds.
package authgate

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Route is what one request asks of the gate.
type Route struct {
	Op domain.Op
	// Resource is the stream name or token id the request names at the
	// gate, "" when it names none there (a listing; a body that names it).
	Resource string
	// Public requests need no credential: probes, CORS preflights, static
	// files, and routes that carry a credential of their own.
	Public bool
	// Live requests are held reads: they end once the grant no longer
	// holds.
	Live bool
}

// Gate admits requests to one listener. The zero Gate, and one made
// without an Authorizer, admits everything: auth is off.
type Gate struct {
	auth     ports.Authorizer
	audience domain.Audience
}

// New returns the gate of a listener of audience aud; auth nil is off.
func New(auth ports.Authorizer, aud domain.Audience) *Gate {
	return &Gate{auth: auth, audience: aud}
}

// On reports whether the gate checks credentials.
func (g *Gate) On() bool { return g != nil && g.auth != nil }

// Admit decides r, asking route (called only while auth is on) which
// operation r is. It returns the request to serve, carrying
// the grant (GrantOf) and, for a live route, a context that ends when the
// grant no longer holds, and a release to call when the request ends. The
// error wraps ports.ErrUnauthenticated or ports.ErrForbidden.
func (g *Gate) Admit(r *http.Request, routeOf func(*http.Request) Route) (*http.Request, func(), error) {
	if !g.On() {
		return r, noRelease, nil
	}
	route := routeOf(r)
	if route.Public {
		return r, noRelease, nil
	}
	grant, err := g.auth.Authorize(ports.AuthRequest{Authorization: r.Header.Get("Authorization"),
		Op: route.Op, Audience: g.audience, Resource: route.Resource})
	if err != nil {
		return r, noRelease, err
	}
	if !needsGrant(route, grant) {
		return r, noRelease, nil
	}
	var ctx context.Context = &grantContext{Context: r.Context(), grant: grant}
	release := noRelease
	if route.Live {
		ctx, release = g.auth.Hold(ctx, grant)
	}
	return r.WithContext(ctx), release, nil
}

// needsGrant reports whether the handler may ask for the grant: a request
// on one named stream, not live and not auto-prefixed, is served alike
// under every grant that allows it, and is spared the context that would
// carry it (two allocations an append). Everything else carries it:
// listings filter by it, admin and token routes decide by it, live reads
// hold it, auto-prefixed names resolve by it.
func needsGrant(route Route, grant ports.Grant) bool {
	return route.Live || route.Resource == "" || route.Op.Resource() != domain.ResourceStream ||
		route.Op == domain.OpList || grant.Scope.AutoPrefixStreams
}

// Also decides one more operation that an admitted request r implies
// (a fork reads its source): nil when it is allowed or auth is off.
func (g *Gate) Also(r *http.Request, op domain.Op, resource string) error {
	if !g.On() {
		return nil
	}
	_, err := g.auth.Authorize(ports.AuthRequest{Authorization: r.Header.Get("Authorization"),
		Op: op, Audience: g.audience, Resource: resource})
	return err
}

// Ended returns the gate's error when r's context ended because its grant
// no longer holds, and err otherwise: a live read cut off by a revocation
// answers 401 if it has not started its answer.
func Ended(r *http.Request, err error) error {
	if cause := context.Cause(r.Context()); cause != nil && errors.Is(cause, ports.ErrUnauthenticated) {
		return cause
	}
	return err
}

func noRelease() {}

type grantKey struct{}

// grantContext carries an admitted request's grant: one allocation, where
// context.WithValue and the boxed grant would be two.
type grantContext struct {
	context.Context
	grant ports.Grant
}

func (c *grantContext) Value(key any) any {
	if key == (grantKey{}) {
		return &c.grant
	}
	return c.Context.Value(key)
}

// GrantOf returns the grant the gate admitted a request's context with;
// false when auth is off, the route is public, or the request names one
// stream and needs no grant (needsGrant).
func GrantOf(ctx context.Context) (ports.Grant, bool) {
	if g, ok := ctx.Value(grantKey{}).(*ports.Grant); ok {
		return *g, true
	}
	return ports.Grant{}, false
}

// Resolve returns the stored name of a client's stream name under the
// request's grant: inside the grant's prefix when it auto-prefixes.
func Resolve(ctx context.Context, name string) string {
	if g, ok := GrantOf(ctx); ok {
		return g.Scope.Resolve(name)
	}
	return name
}

// Relative writes the stored names in an answer's message as the client
// names them, under an auto-prefixed grant: the client never sees the
// prefix its names resolve under.
func Relative(ctx context.Context, message string) string {
	if g, ok := GrantOf(ctx); ok && g.Scope.AutoPrefixStreams {
		return strings.ReplaceAll(message, g.Scope.Streams[0].Value, "/")
	}
	return message
}

// Status is the HTTP status of a gate error: 401, 403, or 0 for another
// error.
func Status(err error) int {
	switch {
	case errors.Is(err, ports.ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, ports.ErrForbidden):
		return http.StatusForbidden
	}
	return 0
}

// SetChallenge sets the 401's WWW-Authenticate header, which HTTP asks of
// every 401.
func SetChallenge(h http.Header, status int) {
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="pico"`)
	}
}
