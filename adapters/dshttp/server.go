// Package dshttp serves the Durable Streams protocol over HTTP, driving the
// same stream service as the Pico listener, so a stream written with one
// protocol reads back with the other. A stream is named by its URL path as
// sent: PUT creates it, POST appends to or closes it, GET reads it
// (catch-up, long-poll or server-sent events), HEAD describes it and DELETE
// removes it.
//
// Each stored record is one Durable Streams message: a whole append body,
// or for application/json streams one element of the appended array.
// Offsets count records. Stream-Seq is scoped per stream.
package dshttp

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/ports"
)

// Config configures the Durable Streams listener.
type Config struct {
	Streams ports.Streams
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
	// Done is closed when the server starts shutting down: long-polls answer
	// and event streams end cleanly.
	Done <-chan struct{}
	// Logger receives internal failures (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock of Stream-Cursor values (default time.Now).
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
}

func newServer(cfg Config) *server {
	if cfg.Streams == nil {
		panic("dshttp: Config.Streams is nil")
	}
	if cfg.Routing != "" && cfg.Routing != "redirect" && cfg.Routing != "local" {
		panic("dshttp: unknown routing mode " + cfg.Routing + ` (want "redirect" or "local")`)
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
	return &server{cfg: cfg, streams: cfg.Streams, redirect: cfg.Routing != "local", log: log,
		jitterSeconds: func() uint64 { return 1 + rand.Uint64N(maxCursorJitterSec) }, keepAlive: sseKeepAlive}
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

var protocolMethods = []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions}

func (s *server) handler() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.renderError
	e.Pre(s.serveTargetsOutsideRouter)
	e.Use(commonHeaders)
	// Every path is a stream name, so one handler serves them all; other
	// methods become echo's 405, rendered by renderError.
	e.Match(protocolMethods, "/*", s.serve)
	return e
}

// serveTargetsOutsideRouter serves request targets the router cannot match
// (an absolute URL without a path, "*") so they too get protocol answers.
func (s *server) serveTargetsOutsideRouter(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasPrefix(echo.GetPath(c.Request()), "/") {
			return next(c)
		}
		return commonHeaders(s.serve)(c)
	}
}

func (s *server) serve(c echo.Context) error {
	r := c.Request()
	if r.Method == http.MethodOptions {
		return preflight(c)
	}
	if !slices.Contains(protocolMethods, r.Method) {
		return echo.ErrMethodNotAllowed
	}
	name := streamName(r)
	if root, rest, ok := controlRoute(name); ok {
		return s.control(c, root, rest)
	}
	if err := checkName(name); err != nil {
		return err
	}
	if r.Method != http.MethodPut {
		if err := s.routeToOwner(name); err != nil {
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

// streamName is the path as the client sent it: names are opaque, so two
// spellings of one decoded path are two streams.
func streamName(r *http.Request) string {
	name := r.URL.EscapedPath()
	if name == "" {
		return "/"
	}
	return name
}

func checkName(name string) error {
	switch {
	case !strings.HasPrefix(name, "/"):
		return badRequest("a stream URL is a path starting with /, got %s", clip(name))
	case len(name) > maxNameBytes:
		return badRequest("stream path is %d bytes; the limit is %d", len(name), maxNameBytes)
	}
	return nil
}

// routeToOwner returns a *ports.RedirectError when another node serves name.
func (s *server) routeToOwner(name string) error {
	if !s.redirect {
		return nil
	}
	addr, err := s.streams.Route(name)
	if err != nil {
		return statusError(http.StatusServiceUnavailable, "cannot find the stream's owner: %v", err)
	}
	if addr != "" {
		return &ports.RedirectError{Address: addr}
	}
	return nil
}

// redirectTo answers 307 to the same path and query on addr.
func redirectTo(c echo.Context, addr string) error {
	r := c.Request()
	loc := strings.TrimRight(addr, "/") + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	h := c.Response().Header()
	h.Set(echo.HeaderLocation, loc)
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusTemporaryRedirect)
}

// limits bound one read: a chunk of about MaxChunkBytes.
func (s *server) limits() ports.ReadLimits {
	return ports.ReadLimits{Bytes: s.cfg.MaxChunkBytes}
}
