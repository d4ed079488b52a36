package subscriptions

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Config wires a Service.
type Config struct {
	Plane *meta.Plane
	By    domain.Proposer // this node process
	// Streams gives tails (through List, which opens and touches nothing)
	// and appends wake records.
	Streams ports.Streams
	// Webhooks delivers webhooks; nil refuses webhook subscriptions.
	Webhooks ports.WebhookSender
	// FormatOffset writes an offset as the protocol shows it (in webhook
	// bodies); the default is decimal.
	FormatOffset func(uint64) string
	// SendTimeout bounds one webhook delivery (10 s).
	SendTimeout time.Duration
	Now         func() time.Time
	Logger      *slog.Logger
}

// Service implements ports.Subscriptions.
type Service struct {
	cfg  Config
	keys signingKeys
	kick chan struct{}

	mu       sync.Mutex
	inflight map[string]bool     // subscription keys with a webhook POST under way here
	scanned  map[string]scanMark // per key, how far the pattern was matched here
	sends    sync.WaitGroup
}

var _ ports.Subscriptions = (*Service)(nil)

// New returns a service; RunDelivery makes it wake workers.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FormatOffset == nil {
		cfg.FormatOffset = func(n uint64) string { return fmt.Sprint(n) }
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = 10 * time.Second
	}
	return &Service{cfg: cfg, kick: make(chan struct{}, 1), inflight: map[string]bool{}, scanned: map[string]scanMark{}}
}

func (s *Service) nowMs() int64 { return s.cfg.Now().UnixMilli() }

// maxRaces bounds the re-reads of one update that keeps losing races.
const maxRaces = 16

// update reads the record under key and lets fn decide its next state
// (fn gets a fresh copy, nil when absent, and returns nil to leave it as
// it is); the next state is written only if the entry's revision is still
// the one read, and a lost race runs fn again on the newer record. It
// returns the record as it now stands.
func (s *Service) update(ctx context.Context, key string, fn func(*record) (*record, error)) (*record, error) {
	for range maxRaces {
		v := s.cfg.Plane.View()
		cur, rev, err := readRecord(&v, key)
		if err != nil {
			return nil, err
		}
		next, err := fn(cur)
		if err != nil || next == nil {
			return cur, err
		}
		r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKVIf{By: s.cfg.By, Space: domain.SpaceRegistry,
			Key: key, Value: encodeRecord(next), IfRev: rev})
		switch {
		case err != nil:
			return nil, unavailable("cannot write subscription state: %v", err)
		case r.OK():
			return next, nil
		case r.Code != domain.ResultRevMismatch:
			return nil, invalid("cannot store the subscription: %s", r.Reason)
		}
	}
	return nil, unavailable("subscription %s is updated too often concurrently", key)
}

// readRecord decodes the record under key from a view; rev is 0 when absent.
func readRecord(v *domain.State, key string) (*record, uint64, error) {
	e, ok := v.KV(domain.SpaceRegistry, key)
	if !ok {
		return nil, 0, nil
	}
	r, err := decodeRecord(e.Value)
	if err != nil {
		return nil, 0, fmt.Errorf("subscriptions: undecodable record %s: %w", key, err)
	}
	return r, e.Rev, nil
}

// live reads a record that must exist and not be deleted.
func live(r *record) error {
	if r == nil || r.deleted() {
		return subErr(ports.ErrSubscriptionNotFound, "subscription not found")
	}
	return nil
}

func subErr(kind error, format string, args ...any) error {
	return &ports.SubscriptionError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return subErr(ports.ErrInvalidSubscription, format, args...)
}

func unavailable(format string, args ...any) error {
	return ports.Errorf(ports.ErrUnavailable, format, args...)
}

// wakeLoop makes the delivery loop run soon.
func (s *Service) wakeLoop() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
