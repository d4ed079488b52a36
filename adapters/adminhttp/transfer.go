package adminhttp

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// transfer is POST /admin/transfer {"stream": NAME, "toNode": N}: it
// answers with the stream as the view holds it once this node has let go
// of it (transferTo names the target until the target opens it).
func (h handlers) transfer(c echo.Context) error {
	var req adminwire.Transfer
	if err := decodeBody(c, &req); err != nil || req.Stream == "" || req.ToNode == nil || *req.ToNode == 0 {
		return orUsage(err, fmt.Sprintf(`body: want {"stream": NAME, "toNode": N}, N from 1 to %d`, uint32(math.MaxUint32)))
	}
	name := httpclient.StreamPath(req.Stream) // as the CLI and the listeners name streams
	if err := h.n.Transfer(c.Request().Context(), name, domain.NodeID(*req.ToNode)); err != nil {
		return echo.NewHTTPError(transferStatus(err), err.Error())
	}
	v := h.n.View()
	st, ok := v.StreamByName(name)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "no such stream: "+name)
	}
	return c.JSON(http.StatusOK, streamOf(&v, st))
}

func transferStatus(err error) int {
	switch {
	case errors.Is(err, ports.ErrStreamNotFound):
		return http.StatusNotFound
	case errors.Is(err, ports.ErrStreamGone):
		return http.StatusGone
	case errors.Is(err, ports.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ports.ErrStreamConflict):
		return http.StatusConflict
	}
	return http.StatusServiceUnavailable
}
