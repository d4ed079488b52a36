package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
)

// ErrBootstrapConflict: another secret is stored under the bootstrap
// token's id; startup stops rather than replace a live credential.
var ErrBootstrapConflict = errors.New("auth: a different token is stored under the bootstrap token's id")

// Bootstrap stores wire as a root token unless the same token is stored
// already: every node may be given the same one, and restart freely.
func (s *Service) Bootstrap(ctx context.Context, wire string) error {
	cred, err := domain.ParseToken(wire)
	if err != nil {
		return fmt.Errorf("auth: bootstrap token: %v", err)
	}
	verifier := domain.VerifierOf(cred.Secret)
	for range 3 { // a racing node's put makes the next round find its record
		v := s.cfg.Plane.View()
		if e, ok := v.KV(domain.SpaceTokens, cred.ID); ok {
			rec, err := domain.DecodeTokenRecord(e.Value)
			if err != nil || !sameVerifier(rec.Verifier, verifier) {
				return fmt.Errorf("%w (%q): revoke it first, or bootstrap with that token", ErrBootstrapConflict, cred.ID)
			}
			return nil
		}
		rec := domain.TokenRecord{Verifier: verifier, Scope: domain.RootScope(), CreatedAtMs: s.cfg.Now().UnixMilli()}
		r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKVIf{By: s.cfg.By, Space: domain.SpaceTokens, Key: cred.ID,
			Value: domain.EncodeTokenRecord(rec)})
		if err != nil {
			return fmt.Errorf("auth: bootstrap token: %w", err)
		}
		if r.OK() {
			return nil
		}
	}
	return fmt.Errorf("auth: bootstrap token %q: the record keeps changing", cred.ID)
}

// AnyToken reports whether any token record is stored: --auth required
// without one, and without a bootstrap token, would refuse everyone.
func (s *Service) AnyToken() bool {
	v := s.cfg.Plane.View()
	found := false
	v.KVFrom(domain.SpaceTokens, "", func(string, domain.KVEntry) bool { found = true; return false })
	return found
}
