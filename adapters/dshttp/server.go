package dshttp

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/internal/server/reqlog"
	"github.com/picomq/pico/adapters/internal/server/streamroute"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Config configures the Durable Streams listener.
type Config struct {
	Streams ports.Streams
	// Auth decides every request but preflights (nil: auth is off).
	Auth ports.Authorizer
	// Subscriptions serves the subscription API under "<root>/__ds/";
	// nil answers every path there with 404 SUBSCRIPTION_NOT_FOUND.
	Subscriptions ports.Subscriptions
	// Routing is "redirect" (the default: answer 307 to the stream's owner)
	// or "local" (never redirect).
	Routing string
	// LongPollTimeout bounds a long-poll wait (default 25s).
	LongPollTimeout time.Duration
	// SSEMaxDuration bounds one event stream (default 55s); clients
	// reconnect from the last control event's offset.
	SSEMaxDuration time.Duration
	// MaxBodyBytes bounds a request body (default 8 MiB); larger gets 413.
	MaxBodyBytes int64
	// MaxChunkBytes is about the most record bytes one read returns
	// (default 64 KiB); a record is never split.
	MaxChunkBytes int
	// LiveReaders bounds the live reads (long-poll, SSE) parked at once,
	// shared with the node's other listener; over it a live read gets 503
	// (nil: no bound).
	LiveReaders livehttp.Parking
	// Reads puts catch-up pages behind appends, shared with the node's
	// other listener (nil: no priority).
	Reads livehttp.Scheduler
	// Done is closed when the server starts shutting down: long-polls answer
	// and event streams end cleanly.
	Done <-chan struct{}
	// Logger receives internal failures (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock of Stream-Cursor values and of the expiry that
	// Stream-TTL: 0 stands for (default time.Now; the stream service
	// judges expiry by its own clock, which must be the same one).
	Now func() time.Time
}

const (
	defaultLongPollTimeout = 25 * time.Second
	defaultSSEMaxDuration  = 55 * time.Second
	defaultMaxBodyBytes    = 8 << 20
	defaultMaxChunkBytes   = 64 << 10
	maxNameBytes           = 1024
	sseKeepAlive           = 15 * time.Second
)

// New returns the Durable Streams handler. It panics when cfg has no
// Streams or names an unknown routing mode: both are wiring mistakes.
func New(cfg Config) http.Handler { return newServer(cfg).handler() }

type server struct {
	cfg      Config
	streams  ports.Streams
	redirect bool
	log      *slog.Logger
	// jitterSeconds draws the cursor jitter, 1 to 3600 seconds.
	jitterSeconds func() uint64
	// keepAlive is the silence after which an event stream sends a comment.
	keepAlive time.Duration
	gate      *authgate.Gate
	// shared holds the encodings live readers of one stream share.
	shared *livehttp.Shared
}

func newServer(cfg Config) *server {
	if cfg.Streams == nil {
		panic("dshttp: Config.Streams is nil")
	}
	redirect, err := streamroute.Redirects(cfg.Routing)
	if err != nil {
		panic("dshttp: " + err.Error())
	}
	cfg.LongPollTimeout = orDefault(cfg.LongPollTimeout, defaultLongPollTimeout)
	cfg.SSEMaxDuration = orDefault(cfg.SSEMaxDuration, defaultSSEMaxDuration)
	cfg.MaxBodyBytes = orDefault(cfg.MaxBodyBytes, defaultMaxBodyBytes)
	cfg.MaxChunkBytes = orDefault(cfg.MaxChunkBytes, defaultMaxChunkBytes)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &server{cfg: cfg, streams: cfg.Streams, redirect: redirect, log: log,
		jitterSeconds: func() uint64 { return 1 + rand.Uint64N(maxCursorJitterSec) }, keepAlive: sseKeepAlive,
		gate: authgate.New(cfg.Auth, domain.AudienceDurableStreams), shared: new(livehttp.Shared)}
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (s *server) handler() http.Handler {
	h := streamroute.NewHandler(streamroute.Gated(s.gate, route, preflight, s.serve), commonHeaders, s.renderError)
	return reqlog.Wrap(h, s.log, reqlog.StreamRoute)
}

// serve serves a request the gate admitted.
func (s *server) serve(c echo.Context) error {
	r := c.Request()
	name := streamroute.StreamName(r)
	if root, rest, ok := controlRoute(name); ok {
		return s.control(c, root, rest)
	}
	if err := checkName(name); err != nil {
		return err
	}
	if r.Method != http.MethodPut && s.redirect {
		if err := streamroute.ToOwner(s.streams, name); err != nil {
			return err
		}
	}
	switch r.Method {
	case http.MethodGet:
		return s.read(c, name)
	case http.MethodHead:
		return s.head(c, name)
	case http.MethodPut:
		return s.create(c, name)
	case http.MethodPost:
		return s.append(c, name)
	default:
		return s.delete(c, name)
	}
}

func checkName(name string) error {
	switch {
	case !strings.HasPrefix(name, "/"):
		return badRequest("a stream URL is a path starting with /, got %s", headerval.Clip(name))
	case len(name) > maxNameBytes:
		return badRequest("stream path is %d bytes; the limit is %d", len(name), maxNameBytes)
	}
	return nil
}

// limits bound one read: a chunk of about MaxChunkBytes.
func (s *server) limits() ports.ReadLimits {
	return ports.ReadLimits{Bytes: s.cfg.MaxChunkBytes}
}
