package adminhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/adminwire"
	"github.com/picomq/pico/domain"
)

// ErrUnknownNode: SetSlots named a node that is not registered.
var ErrUnknownNode = errors.New("node is not registered")

// maxSetSlotsBody bounds the body of POST /admin/nodes/{id}.
const maxSetSlotsBody = 1 << 10

func nodesOf(v *domain.State) []adminwire.Node {
	out := []adminwire.Node{}
	v.Nodes(func(n *domain.Node) bool {
		out = append(out, nodeOf(n))
		return true
	})
	return out
}

func nodeOf(n *domain.Node) adminwire.Node {
	return adminwire.Node{ID: uint32(n.ID), Epoch: n.Epoch, Address: n.Address, Slots: n.Slots, Assigned: n.Assigned}
}

func (h handlers) cluster(c echo.Context) error {
	v := h.n.View()
	epoch, held := h.n.LeaseHolder()
	return c.JSON(http.StatusOK, adminwire.Cluster{AppliedIndex: v.Index, Streams: v.StreamCount(),
		Garbage: v.GarbageCount(), LeaseHeld: held, LeaseEpoch: epoch, Nodes: nodesOf(&v)})
}

func (h handlers) nodes(c echo.Context) error {
	v := h.n.View()
	return c.JSON(http.StatusOK, nodesOf(&v))
}

// setSlots is POST /admin/nodes/{id} {"slots": K}: it answers with the
// node as the view holds it afterwards.
func (h handlers) setSlots(c echo.Context) error {
	id, err := strconv.ParseUint(c.Param("id"), 10, 32)
	if err != nil || id == 0 {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("node id %q: want a number from 1 to %d", c.Param("id"), uint32(1<<32-1)))
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxSetSlotsBody+1))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "reading the body: "+err.Error())
	}
	if len(body) > maxSetSlotsBody {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", maxSetSlotsBody))
	}
	var req adminwire.SetSlots
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Slots == nil || dec.More() {
		return echo.NewHTTPError(http.StatusBadRequest, `body: want {"slots": K}, K from 0 to 4294967295`)
	}
	node := domain.NodeID(id)
	switch err := h.n.SetSlots(c.Request().Context(), node, *req.Slots); {
	case errors.Is(err, ErrUnknownNode):
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("node %d is not registered", id))
	case err != nil:
		return echo.NewHTTPError(http.StatusServiceUnavailable, "setting the slots: "+err.Error())
	}
	v := h.n.View()
	n, ok := v.Node(node)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("node %d is not registered", id))
	}
	return c.JSON(http.StatusOK, nodeOf(n))
}

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
