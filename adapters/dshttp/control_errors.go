package dshttp

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/ports"
)

// subscriptionCodes maps the subscription service's sentinels to the
// statuses and codes of the subscription API.
var subscriptionCodes = []struct {
	kind   error
	status int
	code   string
}{
	{ports.ErrSubscriptionNotFound, http.StatusNotFound, "SUBSCRIPTION_NOT_FOUND"},
	{ports.ErrSubscriptionExists, http.StatusConflict, "SUBSCRIPTION_ALREADY_EXISTS"},
	{ports.ErrFenced, http.StatusConflict, "FENCED"},
	{ports.ErrAlreadyClaimed, http.StatusConflict, "ALREADY_CLAIMED"},
	{ports.ErrNoPendingWork, http.StatusConflict, "NO_PENDING_WORK"},
	{ports.ErrInvalidOffset, http.StatusConflict, "INVALID_OFFSET"},
	{ports.ErrInvalidSubscription, http.StatusBadRequest, "INVALID_REQUEST"},
	{ports.ErrWebhookURLRejected, http.StatusBadRequest, "WEBHOOK_URL_REJECTED"},
	{ports.ErrTokenInvalid, http.StatusUnauthorized, "TOKEN_INVALID"},
	{ports.ErrTokenExpired, http.StatusUnauthorized, "TOKEN_EXPIRED"},
	{ports.ErrUnavailable, http.StatusServiceUnavailable, "UNAVAILABLE"},
}

// subscriptionFailure answers a failed subscription call with the API's
// JSON error: {"error":{"code","message"}}, plus the holder and generation
// of a claimed wake.
func (s *server) subscriptionFailure(c echo.Context, err error) error {
	if errors.As(err, new(*httpError)) {
		return err
	}
	for _, m := range subscriptionCodes {
		if !errors.Is(err, m.kind) {
			continue
		}
		e := map[string]any{"code": m.code, "message": err.Error()}
		var se *ports.SubscriptionError
		if errors.As(err, &se) && errors.Is(err, ports.ErrAlreadyClaimed) {
			e["current_holder"], e["generation"] = se.Holder, se.Generation
		}
		return writeJSON(c, m.status, jsonType, map[string]any{"error": e})
	}
	s.log.Error("subscription request failed", "err", err)
	return controlError(http.StatusInternalServerError, "INTERNAL_ERROR", "internal error")
}

func writeJSON(c echo.Context, status int, contentType string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, contentType, b)
}

// readBounded reads at most limit bytes of the body (413 beyond).
func readBounded(c echo.Context, limit int64) ([]byte, error) {
	body, err := livehttp.ReadBody(c.Response().Writer, c.Request(), limit)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, controlError(http.StatusRequestEntityTooLarge, "INVALID_REQUEST", "request body is over the limit")
	case livehttp.BodyTimedOut(err):
		return nil, controlError(http.StatusRequestTimeout, "INVALID_REQUEST", err.Error())
	case err != nil:
		return nil, controlError(http.StatusBadRequest, "INVALID_REQUEST", "cannot read the request body")
	}
	return body, nil
}

// decodeControlJSON parses a JSON object body into v.
func decodeControlJSON(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return controlError(http.StatusBadRequest, "INVALID_REQUEST", "invalid JSON body: "+err.Error())
	}
	return nil
}
