package adminhttp

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
)

// streamsPrefix is the route of GET /admin/streams/{name}: the name is the
// rest of the path as sent (escaped), with its leading slash, as the stream
// listeners name streams (so /admin/streams/ is the stream named "/").
const streamsPrefix = "/admin/streams"

func (h handlers) stream(c echo.Context) error {
	name := strings.TrimPrefix(c.Request().URL.EscapedPath(), streamsPrefix)
	if name == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "no stream name: GET /admin/streams/NAME")
	}
	v := h.n.View()
	st, ok := v.StreamByName(name)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("no such stream: %s", name))
	}
	return c.JSON(http.StatusOK, streamOf(&v, st))
}

func streamOf(v *domain.State, st *domain.Stream) adminwire.Stream {
	out := adminwire.Stream{ID: st.ID, Name: st.Name, CreatedMs: st.CreatedMs, Owner: uint32(st.Owner),
		OwnerEpoch: st.OwnerEpoch, Open: v.IsOpen(st), Epoch: st.Epoch, Sealed: st.Sealed,
		Start: st.Start, CommittedEnd: st.End, Objects: st.Objects.Len(), Unrecovered: len(st.Unrecovered),
		ForkAt: st.ForkAt, Forks: st.Forks, SoftDeleted: st.SoftDeleted, TransferTo: uint32(v.PendingTransfer(st))}
	if st.ForkOf != 0 {
		out.ForkOfID = st.ForkOf
		if src, ok := v.Stream(st.ForkOf); ok {
			out.ForkOf = src.Name
		}
	}
	// The service wrote the config; one it cannot decode leaves these
	// fields out rather than failing the whole answer.
	if cfg, err := domain.DecodeStreamConfig(st.Meta); err == nil {
		out.ContentType, out.RetentionSec, out.IdleTTLSec, out.ExpiresAtMs = cfg.ContentType, cfg.TTLSec, cfg.IdleTTLSec, cfg.ExpiresAtMs
	}
	return out
}
