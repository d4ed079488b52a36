// Package adminhttp serves the admin listener over echo: liveness and
// readiness probes, the cluster view as JSON, a stream's metadata, node
// slots, transfers, drains, metrics for Prometheus, and a dashboard at / that
// reads that JSON. Every error is the admin error JSON.
package adminhttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/reqlog"
	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Node is what the admin listener needs from the running node. The app
// satisfies it; this package never imports the app.
type Node interface {
	// Health is nil while the process is up (liveness).
	Health() error
	// Ready is nil when the node should receive traffic.
	Ready() error
	// View returns the latest applied metadata state (immutable).
	View() domain.State
	// LeaseHolder reports whether this node holds the maintenance lease.
	LeaseHolder() (epoch uint64, held bool)
	// SetSlots sets a node's slots and returns once the view holds them:
	// ErrUnknownNode when the node is not registered, ErrNoProcess when no
	// process runs its registration.
	SetSlots(ctx context.Context, node domain.NodeID, slots uint32) error
	// Transfer moves a stream to a node registered with slots, through its
	// writer wherever it runs, and returns once the transfer is recorded
	// and this node has let go of it: a ports.StreamError of kind
	// ErrStreamNotFound, ErrStreamGone (deleted, kept for its forks),
	// ErrBadRequest (no such target), ErrStreamConflict (another transfer
	// is pending) or ErrUnavailable (the writer did not take it).
	Transfer(ctx context.Context, stream string, to domain.NodeID) error
	// DrainNode sets a node's slots to 0 and starts moving every stream
	// whose home it is to the nodes placement picks, on this node, or
	// continues the drain running here, and returns its progress:
	// ErrUnknownNode when the node is not registered, ErrNoPlacement when
	// streams are left and no other node takes placements.
	DrainNode(ctx context.Context, node domain.NodeID) (Drain, error)
	// DrainProgress is a registered node's drain as this node sees it.
	DrainProgress(node domain.NodeID) Drain
	// Metrics returns this process's samples for /metrics, read at each
	// scrape.
	Metrics() []Metric
}

// MemberNode is a Node that tells how the nodes it sees are doing; the
// listings of another Node show only the registrations.
type MemberNode interface {
	Node
	// Liveness is node id's state ("alive", "suspect", "fenced", "left") and for
	// how long its heartbeat has looked the same; known is false when
	// this node cannot tell.
	Liveness(id domain.NodeID) (state string, quiet time.Duration, known bool)
}

// AuthNode is a Node that authorizes requests and administers tokens;
// a Node that is not one serves with auth off and administers no tokens.
type AuthNode interface {
	Node
	// Auth decides requests; nil while auth is off.
	Auth() ports.Authorizer
	// Tokens issues, revokes and lists tokens.
	Tokens() ports.TokenAdmin
}

// New returns the admin HTTP handler. openAPI, when given, is served at
// /openapi.yaml: the stream protocol's description. An AuthNode's
// authorizer decides every request but the public routes.
func New(n Node, openAPI []byte) http.Handler {
	var logger *slog.Logger
	if ln, ok := n.(LoggedNode); ok {
		logger = ln.Logger()
	}
	return reqlog.Wrap(newEcho(n, openAPI), logger, "unmatched")
}

// newEcho is the admin routes on echo, without the request log.
func newEcho(n Node, openAPI []byte) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = renderError
	h := handlers{n: n}
	var gate *authgate.Gate
	if an, ok := n.(AuthNode); ok {
		h.tokenAdmin, gate = an.Tokens(), authgate.New(an.Auth(), domain.AudienceAdmin)
	}
	e.Use(nameRoute)
	for _, rt := range routes(h, openAPI) {
		e.Add(rt.method, rt.path, rt.serve, admit(gate, rt.auth))
	}
	return e
}

// LoggedNode is a Node with a logger for the request log; another Node's
// requests go to slog.Default().
type LoggedNode interface {
	Node
	Logger() *slog.Logger
}

// nameRoute gives the request log the route template echo matched.
func nameRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := c.Path(); p != "" {
			reqlog.SetRoute(c.Request().Context(), p)
		}
		return next(c)
	}
}

// route is one admin route and the one operation it is.
type route struct {
	method, path string
	serve        echo.HandlerFunc
	auth         authgate.Route
}

// public routes need no credential: probes, the dashboard's files, the
// protocol's description.
var public = authgate.Route{Public: true}

func op(o domain.Op) authgate.Route { return authgate.Route{Op: o} }

// routes is the admin listener's route table: each route with its
// operation. Admin operations name no stream or token at the gate; the
// token handlers apply the caller's token matchers themselves.
func routes(h handlers, openAPI []byte) []route {
	rs := []route{
		{http.MethodGet, "/health", h.health, public},
		{http.MethodGet, "/ready", h.ready, public},
		{http.MethodGet, "/admin/cluster", h.cluster, op(domain.OpClusterRead)},
		{http.MethodGet, "/admin/nodes", h.nodes, op(domain.OpNodeRead)},
		{http.MethodPost, "/admin/nodes/:id", h.setSlots, op(domain.OpUpdateNodeSlots)},
		{http.MethodPost, "/admin/nodes/:id/drain", h.drainNode, op(domain.OpDrainNode)},
		{http.MethodGet, "/admin/nodes/:id/drain", h.drainProgress, op(domain.OpNodeRead)},
		{http.MethodGet, "/admin/streams/*", h.stream, op(domain.OpStreamInspect)},
		{http.MethodPost, "/admin/transfer", h.transfer, op(domain.OpTransferStream)},
		{http.MethodGet, "/metrics", echo.WrapHandler(metricsHandler(h.n)), op(domain.OpClusterRead)},
	}
	rs = append(rs, tokenRoutes(h)...)
	rs = append(rs, dashboardRoutes()...)
	if openAPI != nil {
		rs = append(rs, route{http.MethodGet, "/openapi.yaml", func(c echo.Context) error {
			return c.Blob(http.StatusOK, "application/yaml", openAPI)
		}, public})
	}
	return rs
}

// admit runs the gate before a route's handler reads anything.
func admit(gate *authgate.Gate, rt authgate.Route) echo.MiddlewareFunc {
	routeOf := func(*http.Request) authgate.Route { return rt }
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r, release, err := gate.Admit(c.Request(), routeOf)
			if err != nil {
				return echo.NewHTTPError(authgate.Status(err), err.Error())
			}
			defer release()
			c.SetRequest(r)
			return next(c)
		}
	}
}

type handlers struct {
	n          Node
	tokenAdmin ports.TokenAdmin // nil: the token routes answer 503
}

type probe struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func probeResponse(c echo.Context, err error) error {
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, probe{Error: err.Error()})
	}
	return c.JSON(http.StatusOK, probe{OK: true})
}

func (h handlers) health(c echo.Context) error { return probeResponse(c, h.n.Health()) }
func (h handlers) ready(c echo.Context) error  { return probeResponse(c, h.n.Ready()) }

// renderError answers every error with the admin error JSON.
func renderError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := http.StatusInternalServerError, err.Error()
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code, msg = he.Code, fmt.Sprint(he.Message)
	}
	authgate.SetChallenge(c.Response().Header(), code)
	c.JSON(code, adminwire.Error{Error: msg})
}
