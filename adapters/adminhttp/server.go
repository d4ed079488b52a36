// Package adminhttp serves the admin listener over echo: liveness and
// readiness probes, the cluster view as JSON and metrics for Prometheus.
package adminhttp

import (
	"net/http"

	"github.com/labstack/echo/v4"

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
	// Metrics returns this process's samples for /metrics, read at each
	// scrape.
	Metrics() []Metric
}

// New returns the admin HTTP handler. openAPI, when given, is served at
// /openapi.yaml: the stream protocol's description.
func New(n Node, openAPI []byte) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	h := handlers{n}
	e.GET("/health", h.health)
	e.GET("/ready", h.ready)
	e.GET("/admin/cluster", h.cluster)
	e.GET("/admin/nodes", h.nodes)
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

type nodeJSON struct {
	ID       uint32 `json:"id"`
	Epoch    uint64 `json:"epoch"`
	Address  string `json:"address"`
	Slots    uint32 `json:"slots"`
	Assigned uint32 `json:"assignedStreams"`
}

type clusterJSON struct {
	AppliedIndex uint64     `json:"appliedIndex"`
	Streams      int        `json:"streamCount"`
	Garbage      int        `json:"garbageObjects"`
	LeaseHeld    bool       `json:"leaseHeldHere"`
	LeaseEpoch   uint64     `json:"leaseEpoch,omitempty"`
	Nodes        []nodeJSON `json:"nodes"`
}

func nodesOf(v *domain.State) []nodeJSON {
	out := []nodeJSON{}
	v.Nodes(func(n *domain.Node) bool {
		out = append(out, nodeJSON{ID: uint32(n.ID), Epoch: n.Epoch, Address: n.Address, Slots: n.Slots, Assigned: n.Assigned})
		return true
	})
	return out
}

func (h handlers) cluster(c echo.Context) error {
	v := h.n.View()
	epoch, held := h.n.LeaseHolder()
	return c.JSON(http.StatusOK, clusterJSON{AppliedIndex: v.Index, Streams: v.StreamCount(),
		Garbage: v.GarbageCount(), LeaseHeld: held, LeaseEpoch: epoch, Nodes: nodesOf(&v)})
}

func (h handlers) nodes(c echo.Context) error {
	v := h.n.View()
	return c.JSON(http.StatusOK, nodesOf(&v))
}
