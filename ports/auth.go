package ports

import (
	"context"
	"errors"

	"github.com/picomq/pico/domain"
)

// Sentinel errors of authorization. Each listener renders them in its own
// protocol's error format.
var (
	// ErrUnauthenticated: no valid credential (absent, malformed, unknown,
	// wrong secret, expired or revoked), or a request without one that the
	// anonymous scope does not allow: a 401.
	ErrUnauthenticated = errors.New("no valid credential")
	// ErrForbidden: a valid credential whose scope does not allow the
	// request: a 403.
	ErrForbidden = errors.New("not allowed")
	// ErrTokenExists: an issue named an id already taken: a 409.
	ErrTokenExists = errors.New("token id is taken")
	// ErrTokenNotFound: a revoke named an id no record has: a 404.
	ErrTokenNotFound = errors.New("no such token")
)

// AuthRequest is what the gate asks of one request.
type AuthRequest struct {
	// Authorization is the header's value ("" when absent).
	Authorization string
	Op            domain.Op
	Audience      domain.Audience
	// Resource is the stream name or token id the request acts on, or ""
	// when it names none at the gate (a listing, or a body that names it).
	Resource string
}

// Grant is an allowed request's credential: the token's id ("anonymous"
// for a request without one), its scope, and the revision of its record,
// which a revocation or reissue changes.
type Grant struct {
	TokenID string
	Scope   domain.Scope
	Rev     uint64
}

// TokenInfo is a token record as a listing shows it: never a secret or
// its hash.
type TokenInfo struct {
	ID          string
	Scope       domain.Scope
	Issuer      string
	CreatedAtMs int64
}

// Authorizer decides requests from the applied metadata state alone: it
// runs no query, so a revocation holds on a node as soon as the node has
// applied it, with no cache to wait out.
type Authorizer interface {
	// Authorize returns the grant of an allowed request, or an error
	// wrapping ErrUnauthenticated or ErrForbidden whose message says why
	// (never with the secret).
	Authorize(req AuthRequest) (Grant, error)
	// Hold returns a context that ends, within a second, once grant no
	// longer holds (its token revoked, reissued or expired): for live
	// reads. release frees what Hold took; call it when the request ends.
	Hold(ctx context.Context, grant Grant) (held context.Context, release func())
}

// TokenAdmin issues, revokes and lists tokens for the admin listener. Each
// method takes the caller's grant and refuses, with ErrForbidden, what the
// caller's scope does not cover.
type TokenAdmin interface {
	// Issue stores a new token narrowed from the caller's scope and
	// returns its wire form, the only time the secret is seen ("" for the
	// anonymous token, which is never presented):
	// ErrBadRequest (a malformed id or scope), ErrForbidden (it would
	// widen the caller's scope), ErrTokenExists.
	Issue(ctx context.Context, by Grant, id string, scope domain.Scope) (wire string, err error)
	// Revoke deletes a token record: ErrTokenNotFound, ErrForbidden.
	Revoke(ctx context.Context, by Grant, id string) error
	// Tokens lists the records the caller's token matchers cover, in id
	// order; none unless the caller may list tokens.
	Tokens(by Grant) []TokenInfo
}
