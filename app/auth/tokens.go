package auth

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func randomBytes(b []byte) { _, _ = rand.Read(b) } // never fails (crypto/rand)

// Issue stores a token narrowed from the caller's (ports.TokenAdmin).
func (s *Service) Issue(ctx context.Context, by ports.Grant, id string, scope domain.Scope) (string, error) {
	if err := checkIssue(by, id, scope); err != nil {
		return "", err
	}
	if scope.Expired(s.cfg.Now().UnixMilli()) {
		return "", ports.Errorf(ports.ErrBadRequest, "expiresAtMs %d is not in the future", scope.ExpiresAtMs)
	}
	cred := domain.Credential{ID: id, Secret: make([]byte, domain.IssuedSecretLen)}
	s.cfg.Random(cred.Secret)
	rec := domain.TokenRecord{Verifier: domain.VerifierOf(cred.Secret), Scope: scope, Issuer: by.TokenID,
		CreatedAtMs: s.cfg.Now().UnixMilli()}
	if err := s.put(ctx, id, rec); err != nil {
		return "", err
	}
	if id == domain.AnonymousTokenID {
		return "", nil // its scope serves requests without a credential; it is never one itself
	}
	return domain.FormatToken(cred), nil
}

func checkIssue(by ports.Grant, id string, scope domain.Scope) error {
	switch {
	case !domain.ValidTokenID(id):
		return ports.Errorf(ports.ErrBadRequest, "a token id is 1 to %d printable characters without spaces", domain.MaxTokenIDLen)
	case id == domain.AnonymousTokenID && scope.HasAudience(domain.AudienceAdmin):
		return ports.Errorf(ports.ErrBadRequest, "the anonymous token cannot hold the admin audience")
	}
	if err := scope.Validate(); err != nil {
		return ports.Errorf(ports.ErrBadRequest, "invalid scope: %v", err)
	}
	if !by.Scope.HasOp(domain.OpIssueToken) || !by.Scope.Tokens.Matches(id) {
		return fmt.Errorf("%w: the token id %q is outside what your token may issue", ports.ErrForbidden, id)
	}
	if err := by.Scope.Narrows(scope); err != nil {
		return fmt.Errorf("%w: the scope would widen yours: %v", ports.ErrForbidden, err)
	}
	return nil
}

// put stores rec under id if the id is free or holds an expired record.
func (s *Service) put(ctx context.Context, id string, rec domain.TokenRecord) error {
	v := s.cfg.Plane.View()
	var ifRev uint64
	if old, rev, ok := s.record(&v, id); ok {
		if !old.Scope.Expired(s.cfg.Now().UnixMilli()) {
			return fmt.Errorf("%w: %q", ports.ErrTokenExists, id)
		}
		ifRev = rev
	} else if _, present := v.KV(domain.SpaceTokens, id); present {
		return fmt.Errorf("%w: %q holds a record this node cannot read", ports.ErrTokenExists, id)
	}
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKVIf{By: s.cfg.By, Space: domain.SpaceTokens, Key: id,
		Value: domain.EncodeTokenRecord(rec), IfRev: ifRev})
	switch {
	case err != nil:
		return ports.Errorf(ports.ErrUnavailable, "cannot record the token: %v", err)
	case r.Code == domain.ResultRevMismatch:
		return fmt.Errorf("%w: %q", ports.ErrTokenExists, id)
	case !r.OK():
		return ports.Errorf(ports.ErrBadRequest, "cannot record the token: %s", r)
	}
	return nil
}

// Revoke deletes the record the view holds for id, and only that one
// (ports.TokenAdmin).
func (s *Service) Revoke(ctx context.Context, by ports.Grant, id string) error {
	if !by.Scope.HasOp(domain.OpRevokeToken) || !by.Scope.Tokens.Matches(id) {
		return fmt.Errorf("%w: the token id %q is outside what your token may revoke", ports.ErrForbidden, id)
	}
	v := s.cfg.Plane.View()
	e, ok := v.KV(domain.SpaceTokens, id)
	if !ok {
		return fmt.Errorf("%w: %q", ports.ErrTokenNotFound, id)
	}
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.DeleteKVIf{By: s.cfg.By, Space: domain.SpaceTokens, Key: id, IfRev: e.Rev})
	switch {
	case err != nil:
		return ports.Errorf(ports.ErrUnavailable, "cannot revoke the token: %v", err)
	case r.Code == domain.ResultNotFound:
		return fmt.Errorf("%w: %q", ports.ErrTokenNotFound, id)
	case r.Code == domain.ResultRevMismatch:
		return fmt.Errorf("%w: %q was reissued while being revoked; list the tokens and revoke again", ports.ErrTokenExists, id)
	case !r.OK():
		return ports.Errorf(ports.ErrUnavailable, "cannot revoke the token: %s", r)
	}
	s.forget(id)
	return nil
}

// Tokens lists the records the caller's token matchers cover, none
// without list_tokens (ports.TokenAdmin).
func (s *Service) Tokens(by ports.Grant) []ports.TokenInfo {
	if !by.Scope.HasOp(domain.OpListTokens) {
		return nil
	}
	v := s.cfg.Plane.View()
	var out []ports.TokenInfo
	v.KVFrom(domain.SpaceTokens, "", func(id string, _ domain.KVEntry) bool {
		if by.Scope.Tokens.Matches(id) {
			if rec, _, ok := s.record(&v, id); ok {
				out = append(out, ports.TokenInfo{ID: id, Scope: rec.Scope, Issuer: rec.Issuer, CreatedAtMs: rec.CreatedAtMs})
			}
		}
		return true
	})
	return out
}
