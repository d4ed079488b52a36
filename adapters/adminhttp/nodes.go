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

// Errors of Node.SetSlots the listener answers with a 4xx.
var (
	// ErrUnknownNode: the node is not registered (404).
	ErrUnknownNode = errors.New("node is not registered")
	// ErrNoProcess: no process runs the node's registration, so slots
	// cannot be given to it (409): its next start sets them.
	ErrNoProcess = errors.New("no process runs the node's registration")
)

// setSlots is POST /admin/nodes/{id} {"slots": K}: it answers with the
// node as the view holds it afterwards.
func (h handlers) setSlots(c echo.Context) error {
	id, err := strconv.ParseUint(c.Param("id"), 10, 32)
	if err != nil || id == 0 {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("node id %q: want a number from 1 to %d", c.Param("id"), uint32(1<<32-1)))
	}
	slots, err := decodeSetSlots(c)
	if err != nil {
		return err
	}
	node := domain.NodeID(id)
	switch err := h.n.SetSlots(c.Request().Context(), node, slots); {
	case errors.Is(err, ErrUnknownNode):
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("node %d is not registered", id))
	case errors.Is(err, ErrNoProcess):
		return echo.NewHTTPError(http.StatusConflict, err.Error())
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

// decodeSetSlots reads {"slots": K}: one JSON object, nothing after it.
func decodeSetSlots(c echo.Context) (uint32, error) {
	var req adminwire.SetSlots
	if err := decodeBody(c, &req); err != nil || req.Slots == nil {
		return 0, orUsage(err, `body: want {"slots": K}, K from 0 to 4294967295`)
	}
	return *req.Slots, nil
}
