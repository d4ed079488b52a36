package auth

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Plane is what the service needs of the metadata plane.
type Plane interface {
	View() domain.State
	ProposeOne(ctx context.Context, cmd domain.Command) (domain.Result, error)
}

// Config names the service's dependencies.
type Config struct {
	Plane  Plane
	By     domain.Proposer
	Now    func() time.Time
	Logger *slog.Logger
	// Random fills b with secret random bytes (default crypto/rand).
	Random func(b []byte)
}

// Service is the node's authorizer and token administration.
type Service struct {
	cfg Config

	mu      sync.RWMutex
	records map[string]cachedRecord // decoded records by id

	holdsMu sync.Mutex
	holds   map[*hold]struct{}
}

type cachedRecord struct {
	rev uint64
	rec domain.TokenRecord
	err error
}

var (
	_ ports.Authorizer = (*Service)(nil)
	_ ports.TokenAdmin = (*Service)(nil)
)

// New returns the service; Run must run for holds to end and expired
// records to go.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Random == nil {
		cfg.Random = randomBytes
	}
	return &Service{cfg: cfg, records: map[string]cachedRecord{}, holds: map[*hold]struct{}{}}
}

// record returns the applied record of id and its revision.
func (s *Service) record(v *domain.State, id string) (domain.TokenRecord, uint64, bool) {
	e, ok := v.KV(domain.SpaceTokens, id)
	if !ok {
		return domain.TokenRecord{}, 0, false
	}
	s.mu.RLock()
	c, cached := s.records[id]
	s.mu.RUnlock()
	if !cached || c.rev != e.Rev {
		c.rev = e.Rev
		c.rec, c.err = domain.DecodeTokenRecord(e.Value)
		if c.err != nil {
			s.cfg.Logger.Warn("token record does not decode", "id", id, "err", c.err)
		}
		s.mu.Lock()
		s.records[id] = c
		s.mu.Unlock()
	}
	if c.err != nil {
		return domain.TokenRecord{}, 0, false
	}
	return c.rec, e.Rev, true
}

// Authorize decides one request (ports.Authorizer).
func (s *Service) Authorize(req ports.AuthRequest) (ports.Grant, error) {
	cred, present, err := domain.ParseAuthorization(req.Authorization)
	if err != nil {
		return ports.Grant{}, fmt.Errorf("%w: %v", ports.ErrUnauthenticated, err)
	}
	v := s.cfg.Plane.View()
	now := s.cfg.Now().UnixMilli()
	if !present {
		return s.anonymous(&v, req, now)
	}
	rec, rev, ok := s.record(&v, cred.ID)
	if !ok || !sameVerifier(rec.Verifier, domain.VerifierOf(cred.Secret)) {
		return ports.Grant{}, fmt.Errorf("%w: the token is unknown, revoked or wrong", ports.ErrUnauthenticated)
	}
	if rec.Scope.Expired(now) {
		return ports.Grant{}, fmt.Errorf("%w: the token has expired", ports.ErrUnauthenticated)
	}
	if d := check(rec.Scope, req, now); d != domain.DenyNone {
		return ports.Grant{}, fmt.Errorf("%w: %s", ports.ErrForbidden, d)
	}
	return ports.Grant{TokenID: cred.ID, Scope: rec.Scope, Rev: rev}, nil
}

// anonymous decides a request without a credential by the anonymous
// record's scope; every refusal is a 401, since the fix is a credential.
func (s *Service) anonymous(v *domain.State, req ports.AuthRequest, now int64) (ports.Grant, error) {
	rec, rev, ok := s.record(v, domain.AnonymousTokenID)
	if !ok {
		return ports.Grant{}, fmt.Errorf("%w: a bearer token is required (Authorization: Bearer TOKEN)", ports.ErrUnauthenticated)
	}
	if d := check(rec.Scope, req, now); d != domain.DenyNone {
		return ports.Grant{}, fmt.Errorf("%w: a bearer token is required: without one, %s", ports.ErrUnauthenticated, d)
	}
	return ports.Grant{TokenID: domain.AnonymousTokenID, Scope: rec.Scope, Rev: rev}, nil
}

// check applies scope to req, resolving an auto-prefixed stream name.
func check(scope domain.Scope, req ports.AuthRequest, now int64) domain.Denial {
	resource := req.Resource
	if resource != "" && req.Op.Resource() == domain.ResourceStream {
		resource = scope.Resolve(resource)
	}
	return scope.Check(req.Op, req.Audience, resource, now)
}

func sameVerifier(a, b domain.Verifier) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }
