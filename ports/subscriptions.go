package ports

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors of the subscription service. Every error a Subscriptions
// method returns wraps one of these (usually inside a *SubscriptionError),
// ErrUnavailable, or is an internal failure.
var (
	ErrSubscriptionNotFound = errors.New("no such subscription")
	// ErrSubscriptionExists: a create found the id taken with another
	// configuration.
	ErrSubscriptionExists = errors.New("subscription exists with a different configuration")
	// ErrFenced: the wake id or generation named is not the current wake.
	ErrFenced = errors.New("wake generation is stale")
	// ErrAlreadyClaimed: another worker holds the current wake.
	ErrAlreadyClaimed = errors.New("subscription is claimed by another worker")
	// ErrNoPendingWork: a claim found every linked stream acknowledged.
	ErrNoPendingWork = errors.New("subscription has no pending work")
	// ErrInvalidOffset: an acknowledgement names an unlinked stream, moves
	// a cursor back or goes past a stream's tail.
	ErrInvalidOffset = errors.New("invalid acknowledgement offset")
	// ErrInvalidSubscription: the request is malformed (a 400).
	ErrInvalidSubscription = errors.New("invalid subscription request")
	// ErrTokenInvalid: the bearer token was never issued for this
	// subscription, or is too old to be recognised.
	ErrTokenInvalid = errors.New("token invalid")
	// ErrTokenExpired: the token's wake is current but its lease ran out.
	ErrTokenExpired = errors.New("token expired")
	// ErrWebhookURLRejected: the webhook URL is not https, or targets a
	// private, link-local or metadata address.
	ErrWebhookURLRejected = errors.New("webhook URL rejected")
)

// SubscriptionError is a subscription service error with the details
// protocols report. Kind is one of the sentinels above; errors.Is matches it.
type SubscriptionError struct {
	Kind    error
	Message string
	// Holder and Generation describe the current claim on ErrAlreadyClaimed.
	Holder     string
	Generation uint64
}

func (e *SubscriptionError) Error() string {
	if e.Message == "" {
		return e.Kind.Error()
	}
	return e.Message
}

func (e *SubscriptionError) Unwrap() error { return e.Kind }

// SubscriptionType says how a subscription wakes its worker.
type SubscriptionType string

const (
	// WebhookSubscription POSTs each wake, signed, to a URL.
	WebhookSubscription SubscriptionType = "webhook"
	// PullWakeSubscription appends each wake to a stream workers read, and
	// workers claim it.
	PullWakeSubscription SubscriptionType = "pull-wake"
)

// SubscriptionRef names a subscription: its id under a stream root. Stream
// names are Root + a root-relative path ("/v1/stream/" + "events/a").
type SubscriptionRef struct {
	Root string
	ID   string
}

// SubscriptionSpec is the configuration a create carries. Paths are
// root-relative; Pattern is a glob where "*" matches one path segment and
// "**" any number.
type SubscriptionSpec struct {
	Type SubscriptionType
	// Pattern and Streams select the linked streams; at least one is set.
	Pattern string
	Streams []string
	// WebhookURL is where a webhook subscription is delivered.
	WebhookURL string
	// WakeStream is the stream a pull-wake subscription announces wakes on.
	WakeStream string
	// LeaseTTL bounds how long a wake stays with its worker without a
	// heartbeat; 0 means the default (30 s). Allowed: 1 s to 10 min.
	LeaseTTL    time.Duration
	Description string
	// ControlURL is the absolute URL of the control routes under the root
	// ("https://host/v1/stream/__ds/"): callback and key-set URLs are built
	// from it. It is not part of the configuration compared on re-create.
	ControlURL string
}

// LinkedStream is one stream a subscription follows. Offsets are record
// offsets: Acked is the cursor, Tail the stream's tail when read.
type LinkedStream struct {
	Path     string
	Explicit bool // linked by name; otherwise only through the pattern
	Acked    uint64
	Tail     uint64
	Pending  bool // Tail > Acked
}

// WebhookSigning describes how webhook deliveries are signed.
type WebhookSigning struct {
	Alg     string // "ed25519"
	KeyID   string
	JWKSURL string
}

// Subscription is a subscription as a protocol shows it. It never holds a
// secret.
type Subscription struct {
	ID          string
	Type        SubscriptionType
	Pattern     string
	Streams     []LinkedStream
	WebhookURL  string
	Signing     *WebhookSigning // webhook subscriptions only
	WakeStream  string
	LeaseTTL    time.Duration
	CreatedMs   int64
	Failed      bool // the last webhook delivery failed; retries continue
	Description string
}

// StreamAck moves one linked stream's cursor to Offset.
type StreamAck struct {
	Path   string
	Offset uint64
}

// WakeAck is a worker's report on a wake: acknowledgements, and Done when
// it has finished with the wake. Without Done it also renews the lease.
type WakeAck struct {
	WakeID     string
	Generation uint64
	Acks       []StreamAck
	Done       bool
}

// WakeClaim is a claimed pull-wake: the token authorises Ack and Release
// for this wake only.
type WakeClaim struct {
	WakeID     string
	Generation uint64
	Token      string
	Streams    []LinkedStream
	LeaseTTL   time.Duration
}

// JWK is an Ed25519 public key as a JSON Web Key (RFC 8037).
type JWK struct {
	Kty, Crv, Kid, Use, Alg, X string
}

// Subscriptions is the durable subscription service: cursors over sets of
// streams that wake a worker (webhook or pull-wake) whenever a linked
// stream's tail passes its cursor. Wakes are fenced: each has a fresh id
// and a higher generation, and only the current wake's token, id and
// generation are accepted. Every method is safe for concurrent use and may
// be called on any node.
type Subscriptions interface {
	// Put creates a subscription, idempotently: created is false when one
	// with an equal configuration exists; another is ErrSubscriptionExists.
	// Pattern matches link the streams that exist now at their tail; streams
	// created later are linked from their start.
	Put(ctx context.Context, ref SubscriptionRef, spec SubscriptionSpec) (sub Subscription, created bool, err error)
	Get(ctx context.Context, ref SubscriptionRef) (Subscription, error)
	// Delete removes a subscription; a missing one is not an error. Calls
	// of its workers fail from then on without moving any cursor.
	Delete(ctx context.Context, ref SubscriptionRef) error
	// AddStreams links streams by name at their current tail (linked ones
	// stay as they are).
	AddStreams(ctx context.Context, ref SubscriptionRef, paths []string) error
	// RemoveStream drops a stream's explicit link; a link through the
	// pattern stays.
	RemoveStream(ctx context.Context, ref SubscriptionRef, path string) error
	// JWKS returns the public keys webhook signatures verify with.
	JWKS(ctx context.Context) ([]JWK, error)
	// Callback is a webhook worker's report on its wake; next says whether
	// a new wake started because work remains.
	Callback(ctx context.Context, ref SubscriptionRef, token string, ack WakeAck) (next bool, err error)
	// Claim gives the current pull-wake to worker (ErrAlreadyClaimed while
	// another holds it, ErrNoPendingWork when there is nothing to do).
	Claim(ctx context.Context, ref SubscriptionRef, worker string) (WakeClaim, error)
	// Ack is a pull-wake worker's report on its claimed wake, as Callback.
	Ack(ctx context.Context, ref SubscriptionRef, token string, ack WakeAck) (next bool, err error)
	// Release gives a claimed wake back; if work remains a new wake starts.
	Release(ctx context.Context, ref SubscriptionRef, token, wakeID string, generation uint64) error
}
