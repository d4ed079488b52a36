package dshttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/authgate"
	"github.com/picomq/pico/adapters/internal/server/streamroute"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// httpError is an answer this listener gives itself, before or without
// the service. A code makes it a structured JSON error (the reserved
// subscription paths); otherwise the body is the message as plain text.
type httpError struct {
	status  int
	code    string
	message string
}

func (e *httpError) Error() string { return e.message }

func statusError(status int, format string, args ...any) error {
	return &httpError{status: status, message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return statusError(http.StatusBadRequest, format, args...)
}

// serviceStatuses maps the service sentinels to statuses.
var serviceStatuses = []struct {
	kind   error
	status int
}{
	{ports.ErrStreamNotFound, http.StatusNotFound},
	{ports.ErrStreamGone, http.StatusGone},
	{ports.ErrBadRequest, http.StatusBadRequest},
	{ports.ErrStreamConflict, http.StatusConflict},
	{ports.ErrStreamClosed, http.StatusConflict},
	{ports.ErrWriterSeq, http.StatusConflict},
	{ports.ErrProducerGap, http.StatusConflict},
	{ports.ErrProducerFenced, http.StatusForbidden},
	{ports.ErrMatchFailed, http.StatusConflict},
	{ports.ErrUnavailable, http.StatusServiceUnavailable},
	{ports.ErrUnauthenticated, http.StatusUnauthorized},
	{ports.ErrForbidden, http.StatusForbidden},
}

// renderError is echo's error handler: every failure a handler returns
// becomes a redirect or a plain-text error here.
func (s *server) renderError(err error, c echo.Context) {
	if c.Response().Committed {
		return // an event stream already started; it just ends
	}
	if streamroute.AnswerRedirect(err, c, domain.ProtocolDS) {
		return
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	status, message := s.describe(err, h)
	message = authgate.Relative(c.Request().Context(), message)
	authgate.SetChallenge(h, status)
	streamroute.SetRetryAfter(h, status)
	var he *httpError
	switch {
	case c.Request().Method == http.MethodHead:
		_ = c.NoContent(status)
	case errors.As(err, &he) && he.code != "":
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": he.code, "message": he.message}})
		_ = c.Blob(status, jsonType, b)
	default:
		_ = c.Blob(status, textPlain, []byte(message+"\n"))
	}
}

// describe returns the status and message for err, setting the headers
// that go with it.
func (s *server) describe(err error, h http.Header) (int, string) {
	var he *httpError
	var tooLarge *http.MaxBytesError
	var echoErr *echo.HTTPError
	var se *ports.StreamError
	switch {
	case errors.As(err, &he):
		return he.status, he.message
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over the limit of %d bytes", tooLarge.Limit)
	case errors.As(err, &echoErr) && echoErr.Code == http.StatusMethodNotAllowed:
		h.Set(echo.HeaderAllow, allowedMethods)
		return echoErr.Code, "method not allowed; use " + allowedMethods
	case errors.As(err, &se):
		return s.describeStreamError(se, h)
	case errors.As(err, new(*ports.RedirectError)):
		return http.StatusServiceUnavailable, "the stream's owner has no address for this protocol"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "request ended before the service answered"
	}
	if status, ok := serviceStatus(err); ok {
		return status, err.Error()
	}
	s.log.Error("durable streams request failed", "err", err)
	return http.StatusInternalServerError, "internal error"
}

func serviceStatus(err error) (int, bool) {
	for _, m := range serviceStatuses {
		if errors.Is(err, m.kind) {
			return m.status, true
		}
	}
	return 0, false
}

// describeStreamError adds the headers each service error reports.
func (s *server) describeStreamError(se *ports.StreamError, h http.Header) (int, string) {
	status, ok := serviceStatus(se.Kind)
	if !ok {
		s.log.Error("durable streams request failed", "err", se)
		return http.StatusInternalServerError, "internal error"
	}
	switch {
	case errors.Is(se.Kind, ports.ErrProducerFenced):
		headerval.SetUint(h, headerProducerEpoch, se.Verdict().Epoch)
	case errors.Is(se.Kind, ports.ErrProducerGap) && se.Verdict().NewEpoch:
		status = http.StatusBadRequest // a new epoch must start at sequence 0
	case errors.Is(se.Kind, ports.ErrProducerGap):
		headerval.SetUint(h, headerExpectedSeq, se.Verdict().Expected)
		headerval.SetUint(h, headerReceivedSeq, se.Verdict().Received)
	case errors.Is(se.Kind, ports.ErrStreamClosed):
		h.Set(headerClosed, "true")
		if se.HasNext {
			h.Set(headerNextOffset, formatOffset(se.Next))
		}
	}
	return status, se.Error()
}

// closedError is the service's answer to an append to a closed stream,
// for when the listener finds it first.
func closedError(next uint64) error {
	return &ports.StreamError{Kind: ports.ErrStreamClosed, Message: "stream is closed", Next: next, HasNext: true, Closed: true}
}
