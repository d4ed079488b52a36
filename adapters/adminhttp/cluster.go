package adminhttp

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
)

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
