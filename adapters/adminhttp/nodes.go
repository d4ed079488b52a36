package adminhttp

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
)

// Errors of Node.SetSlots and Node.DrainNode the listener answers with a
// 4xx.
var (
	// ErrUnknownNode: the node is not registered (404).
	ErrUnknownNode = errors.New("node is not registered")
	// ErrNoProcess: no process runs the node's registration, so slots
	// cannot be given to it (409): its next start sets them.
	ErrNoProcess = errors.New("no process runs the node's registration")
	// ErrNoPlacement: the node is home to streams and no other node takes
	// placements, so a drain cannot move them (409).
	ErrNoPlacement = errors.New("no other node takes new streams")
)

// Drain is a node's drain, as the admin JSON shows it.
type Drain = adminwire.Drain

// nodeParam reads the {id} of a /admin/nodes/{id} route.
func nodeParam(c echo.Context) (domain.NodeID, error) {
	id, err := strconv.ParseUint(c.Param("id"), 10, 32)
	if err != nil || id == 0 {
		return 0, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("node id %q: want a number from 1 to %d", c.Param("id"), uint32(1<<32-1)))
	}
	return domain.NodeID(id), nil
}

func notRegistered(id domain.NodeID) error {
	return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("node %d is not registered", id))
}

// setSlots is POST /admin/nodes/{id} {"slots": K}: it answers with the
// node as the view holds it afterwards.
func (h handlers) setSlots(c echo.Context) error {
	node, err := nodeParam(c)
	if err != nil {
		return err
	}
	slots, err := decodeSetSlots(c)
	if err != nil {
		return err
	}
	if err := h.n.SetSlots(c.Request().Context(), node, slots); err != nil {
		return nodeRefusal(node, "setting the slots", err)
	}
	v := h.n.View()
	n, ok := v.Node(node)
	if !ok {
		return notRegistered(node)
	}
	return c.JSON(http.StatusOK, nodeOf(n))
}

// drainNode is POST /admin/nodes/{id}/drain (a body, if any, is not
// read): it starts the drain of node id on this node, or continues it,
// and answers with its progress at once; GET on the same path follows it.
func (h handlers) drainNode(c echo.Context) error {
	node, err := nodeParam(c)
	if err != nil {
		return err
	}
	d, err := h.n.DrainNode(c.Request().Context(), node)
	if err != nil {
		return nodeRefusal(node, "draining", err)
	}
	return c.JSON(http.StatusOK, d)
}

// nodeRefusal answers a Node's refusal to act on node: 404 when it is not
// registered, 409 when the cluster does not allow it now, else 503 (the
// log did not take it).
func nodeRefusal(node domain.NodeID, doing string, err error) error {
	switch {
	case errors.Is(err, ErrUnknownNode):
		return notRegistered(node)
	case errors.Is(err, ErrNoProcess), errors.Is(err, ErrNoPlacement):
		return echo.NewHTTPError(http.StatusConflict, err.Error())
	}
	return echo.NewHTTPError(http.StatusServiceUnavailable, doing+": "+err.Error())
}

// drainProgress is GET /admin/nodes/{id}/drain: the streams node id is
// still home to, and what this node's drain of it has done.
func (h handlers) drainProgress(c echo.Context) error {
	node, err := nodeParam(c)
	if err != nil {
		return err
	}
	if v := h.n.View(); !isRegistered(&v, node) {
		return notRegistered(node)
	}
	return c.JSON(http.StatusOK, h.n.DrainProgress(node))
}

func isRegistered(v *domain.State, id domain.NodeID) bool {
	_, ok := v.Node(id)
	return ok
}

// decodeSetSlots reads {"slots": K}: one JSON object, nothing after it.
func decodeSetSlots(c echo.Context) (uint32, error) {
	var req adminwire.SetSlots
	if err := decodeBody(c, &req); err != nil || req.Slots == nil {
		return 0, orUsage(err, `body: want {"slots": K}, K from 0 to 4294967295`)
	}
	return *req.Slots, nil
}
