// Package adminhttp serves the admin listener over echo: liveness and
// readiness probes, the cluster view as JSON, a stream's metadata, node
// slots, transfers, metrics for Prometheus, and a dashboard at / that
// reads that JSON. Every error is the admin error JSON.
package adminhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/adminwire"
	"github.com/picomq/pico/domain"
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
	// Transfer moves a stream to a node registered with slots and returns
	// once this node has let go of it: a ports.StreamError of kind
	// ErrStreamNotFound, ErrStreamGone (deleted, kept for its forks),
	// ErrBadRequest (no such target), ErrStreamConflict (another transfer
	// is pending, or another node writes the stream) or ErrUnavailable.
	Transfer(ctx context.Context, stream string, to domain.NodeID) error
	// Metrics returns this process's samples for /metrics, read at each
	// scrape.
	Metrics() []Metric
}

// New returns the admin HTTP handler. openAPI, when given, is served at
// /openapi.yaml: the stream protocol's description.
func New(n Node, openAPI []byte) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = renderError
	h := handlers{n}
	e.GET("/health", h.health)
	e.GET("/ready", h.ready)
	e.GET("/admin/cluster", h.cluster)
	e.GET("/admin/nodes", h.nodes)
	e.POST("/admin/nodes/:id", h.setSlots)
	e.GET("/admin/streams/*", h.stream)
	e.POST("/admin/transfer", h.transfer)
	routeDashboard(e)
	e.GET("/metrics", echo.WrapHandler(metricsHandler(n)))
	if openAPI != nil {
		e.GET("/openapi.yaml", func(c echo.Context) error {
			return c.Blob(http.StatusOK, "application/yaml", openAPI)
		})
	}
	return e
}

type handlers struct{ n Node }

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
	c.JSON(code, adminwire.Error{Error: msg})
}
