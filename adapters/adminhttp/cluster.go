package adminhttp

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
)

// nodesOf lists the registered nodes, with their liveness when node tells
// it (a MemberNode).
func nodesOf(v *domain.State, node Node) []adminwire.Node {
	m, live := node.(MemberNode)
	out := []adminwire.Node{}
	v.Nodes(func(n *domain.Node) bool {
		w := nodeOf(n)
		w.FeatureLevel = uint32(domain.LevelBase)
		if l, declared := v.NodeLevel(n.ID); declared {
			w.FeatureLevel = uint32(l)
		}
		if live {
			if state, quiet, known := m.Liveness(n.ID); known {
				ms := quiet.Milliseconds()
				w.State, w.HeartbeatAgeMs = state, &ms
			}
		}
		out = append(out, w)
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
		Garbage: v.GarbageCount(), LeaseHeld: held, LeaseEpoch: epoch, FeatureLevel: uint32(v.ClusterLevel()),
		Nodes: nodesOf(&v, h.n)})
}

func (h handlers) nodes(c echo.Context) error {
	v := h.n.View()
	return c.JSON(http.StatusOK, nodesOf(&v, h.n))
}
