package dshttp

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/ports"
)

// wakeReport is a worker's callback or ack body.
type wakeReport struct {
	WakeID     string `json:"wake_id"`
	Generation uint64 `json:"generation"`
	Acks       []struct {
		Stream string `json:"stream"`
		Path   string `json:"path"` // accepted for stream
		Offset string `json:"offset"`
	} `json:"acks"`
	Done bool `json:"done"`
}

// wakeAck converts offsets: only offsets this server hands out can be
// acknowledged ("-1" and "now" name no position in a cursor).
func (b *wakeReport) wakeAck() (ports.WakeAck, error) {
	ack := ports.WakeAck{WakeID: b.WakeID, Generation: b.Generation, Done: b.Done}
	for _, a := range b.Acks {
		pos, err := parseOffset(a.Offset)
		if err != nil || !pos.given {
			return ack, controlError(http.StatusConflict, "INVALID_OFFSET", "ack offset "+headerval.Clip(a.Offset)+" is not a stream offset")
		}
		path := a.Stream
		if path == "" {
			path = a.Path
		}
		ack.Acks = append(ack.Acks, ports.StreamAck{Path: path, Offset: pos.at})
	}
	return ack, nil
}

// bearer reads the token of "Authorization: Bearer <token>"; tokens are
// never taken from the URL.
func bearer(r *http.Request) (string, error) {
	scheme, token, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", controlError(http.StatusUnauthorized, "TOKEN_INVALID", "missing or malformed Authorization header")
	}
	return token, nil
}

// readReport reads the token and body of a callback, ack or release.
func readReport(c echo.Context) (string, wakeReport, error) {
	var body wakeReport
	token, err := bearer(c.Request())
	if err != nil {
		return "", body, err
	}
	raw, err := readControlBody(c)
	if err == nil {
		err = decodeControlJSON(raw, &body)
	}
	return token, body, err
}

func (s *server) callback(c echo.Context, ref ports.SubscriptionRef) error {
	return s.report(c, ref, s.cfg.Subscriptions.Callback)
}

func (s *server) ack(c echo.Context, ref ports.SubscriptionRef) error {
	return s.report(c, ref, s.cfg.Subscriptions.Ack)
}

type reportFunc func(ctx context.Context, ref ports.SubscriptionRef, token string, ack ports.WakeAck) (bool, error)

func (s *server) report(c echo.Context, ref ports.SubscriptionRef, call reportFunc) error {
	token, body, err := readReport(c)
	if err != nil {
		return err
	}
	ack, err := body.wakeAck()
	if err != nil {
		return err
	}
	next, err := call(c.Request().Context(), ref, token, ack)
	if err != nil {
		return s.subscriptionFailure(c, err)
	}
	return writeJSON(c, http.StatusOK, jsonType, map[string]bool{"ok": true, "next_wake": next})
}

func (s *server) claim(c echo.Context, ref ports.SubscriptionRef) error {
	raw, err := readControlBody(c)
	if err != nil {
		return err
	}
	var body struct {
		Worker string `json:"worker"`
	}
	if err := decodeControlJSON(raw, &body); err != nil {
		return err
	}
	cl, err := s.cfg.Subscriptions.Claim(c.Request().Context(), ref, body.Worker)
	if err != nil {
		return s.subscriptionFailure(c, err)
	}
	return writeJSON(c, http.StatusOK, jsonType, claimJSON{WakeID: cl.WakeID, Generation: cl.Generation, Token: cl.Token,
		Streams: wakeStreamsJSON(cl.Streams), LeaseTTLMs: cl.LeaseTTL.Milliseconds()})
}

func (s *server) release(c echo.Context, ref ports.SubscriptionRef) error {
	token, body, err := readReport(c)
	if err != nil {
		return err
	}
	if err := s.cfg.Subscriptions.Release(c.Request().Context(), ref, token, body.WakeID, body.Generation); err != nil {
		return s.subscriptionFailure(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

type claimJSON struct {
	WakeID     string           `json:"wake_id"`
	Generation uint64           `json:"generation"`
	Token      string           `json:"token"`
	Streams    []wakeStreamJSON `json:"streams"`
	LeaseTTLMs int64            `json:"lease_ttl_ms"`
}

// wakeStreamJSON is a linked stream in a wake, as webhook bodies show it.
type wakeStreamJSON struct {
	Path        string `json:"path"`
	LinkType    string `json:"link_type"`
	AckedOffset string `json:"acked_offset"`
	TailOffset  string `json:"tail_offset"`
	HasPending  bool   `json:"has_pending"`
}

func wakeStreamsJSON(streams []ports.LinkedStream) []wakeStreamJSON {
	out := make([]wakeStreamJSON, 0, len(streams))
	for _, ls := range streams {
		out = append(out, wakeStreamJSON{Path: ls.Path, LinkType: linkType(ls), AckedOffset: formatOffset(ls.Acked),
			TailOffset: formatOffset(ls.Tail), HasPending: ls.Pending})
	}
	return out
}
