package picohttp

import (
	_ "embed"
	"log/slog"
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

// OpenAPI is the protocol as an OpenAPI 3.1 document.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Config configures the Pico listener.
type Config struct {
	Streams ports.Streams
	// Auth decides every request but preflights (nil: auth is off).
	Auth ports.Authorizer
	// Routing is "redirect" (the default: answer 307 to the stream's owner)
	// or "local" (never redirect).
	Routing string
	// LongPollTimeout bounds a long-poll wait (default 25s).
	LongPollTimeout time.Duration
	// SSEMaxDuration bounds one event stream (default 55s); clients reconnect
	// with Last-Event-ID.
	SSEMaxDuration time.Duration
	// MaxBodyBytes bounds a request body (default 8 MiB); larger gets 413.
	MaxBodyBytes int64
	// MaxChunkBytes is the read size when a read gives no `bytes` (default
	// 64 KiB); `bytes` is capped at max(MaxChunkBytes, 4 MiB).
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
	// Schemas serves /_schemas/ and /_streams/ (nil: they answer 404).
	Schemas ports.Schemas
	// Groups serves /_groups (nil: it answers 404).
	Groups ports.Groups
}

const (
	defaultLongPollTimeout = 25 * time.Second
	defaultSSEMaxDuration  = 55 * time.Second
	defaultMaxBodyBytes    = 8 << 20
	defaultMaxChunkBytes   = 64 << 10
	// readBytesCeiling is the least upper bound on a read's `bytes`.
	readBytesCeiling = 4 << 20
	maxNameBytes     = 1024
	sseKeepAlive     = 15 * time.Second
)

// New returns the Pico protocol handler. It panics when cfg has no Streams
// or names an unknown routing mode: both are wiring mistakes.
func New(cfg Config) http.Handler { return newServer(cfg).handler() }

type server struct {
	cfg      Config
	streams  ports.Streams
	redirect bool
	log      *slog.Logger
	// keepAlive is the silence after which an event stream sends a comment.
	keepAlive time.Duration
	gate      *authgate.Gate
	// shared holds the encodings live readers of one stream share.
	shared *livehttp.Shared
}

func newServer(cfg Config) *server {
	if cfg.Streams == nil {
		panic("picohttp: Config.Streams is nil")
	}
	redirect, err := streamroute.Redirects(cfg.Routing)
	if err != nil {
		panic("picohttp: " + err.Error())
	}
	if cfg.LongPollTimeout <= 0 {
		cfg.LongPollTimeout = defaultLongPollTimeout
	}
	if cfg.SSEMaxDuration <= 0 {
		cfg.SSEMaxDuration = defaultSSEMaxDuration
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBodyBytes
	}
	if cfg.MaxChunkBytes <= 0 {
		cfg.MaxChunkBytes = defaultMaxChunkBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &server{cfg: cfg, streams: cfg.Streams, redirect: redirect, log: log, keepAlive: sseKeepAlive,
		gate: authgate.New(cfg.Auth, domain.AudiencePico), shared: new(livehttp.Shared)}
}

func (s *server) handler() http.Handler {
	h := streamroute.NewHandler(streamroute.Gated(s.gate, route, preflight, s.serve), commonHeaders, s.renderError, http.MethodPatch)
	return reqlog.Wrap(h, s.log, reqlog.StreamRoute)
}

// serve serves a request the gate admitted.
func (s *server) serve(c echo.Context) error {
	r := c.Request()
	if rest, ok := reservedPath(streamroute.RawStreamName(r), groupsPath); ok {
		return s.serveGroups(c, rest)
	}
	if schema, ok := strings.CutPrefix(streamroute.RawStreamName(r), schemasPrefix); ok {
		return s.serveSchema(c, schema)
	}
	name := streamroute.StreamName(r)
	if !strings.HasPrefix(name, "/") {
		return badRequest("a stream name is a path starting with /, got %s", headerval.Clip(name))
	}
	if len(name) > maxNameBytes {
		return badRequest("stream name is %d bytes; the limit is %d", len(name), maxNameBytes)
	}
	if name == "/" {
		return s.serveRoot(c)
	}
	if stream, ok := strings.CutPrefix(streamroute.RawStreamName(r), streamsPrefix); ok {
		return s.serveStreamSchema(c, authgate.Resolve(r.Context(), "/"+stream))
	}
	if r.Method == http.MethodPatch {
		return echo.ErrMethodNotAllowed
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
		return s.post(c, name)
	default:
		return s.delete(c, name)
	}
}

// serveRoot answers the listing path, which is never a stream.
func (s *server) serveRoot(c echo.Context) error {
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead:
		return s.list(c)
	default:
		return badRequest("/ is the stream listing, not a stream; name a stream by a longer path")
	}
}

// reservedPath reports whether raw is the reserved path prefix or under
// it, with what follows it.
func reservedPath(raw, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	return rest, true
}
