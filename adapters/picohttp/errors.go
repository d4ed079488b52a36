package picohttp

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

// Error codes of the JSON error body.
const (
	codeNotFound         = "not_found"
	codeBadRequest       = "bad_request"
	codeTooLarge         = "too_large"
	codeTimeout          = "timeout"
	codeConflict         = "conflict"
	codeClosed           = "closed"
	codeSequenceGap      = "sequence_gap"
	codeFenced           = "fenced"
	codeMatchFailed      = "match_failed"
	codeUnavailable      = "unavailable"
	codeMethodNotAllowed = "method_not_allowed"
	codeInternal         = "internal"
	codeUnauthorized     = "unauthorized"
	codeForbidden        = "forbidden"
)

// protocolError is an error this listener finds itself, before or without
// the service.
type protocolError struct {
	status  int
	code    string
	message string
}

func (e *protocolError) Error() string { return e.message }

func badRequest(format string, args ...any) error {
	return &protocolError{status: http.StatusBadRequest, code: codeBadRequest, message: fmt.Sprintf(format, args...)}
}

type errorBody struct {
	Error   string  `json:"error"`
	Message string  `json:"message"`
	NextSeq *uint64 `json:"next_seq,omitempty"`
}

// serviceErrorCodes maps the service sentinels to statuses and codes.
var serviceErrorCodes = []struct {
	kind   error
	status int
	code   string
}{
	{ports.ErrStreamNotFound, http.StatusNotFound, codeNotFound},
	{ports.ErrSchemaNotFound, http.StatusNotFound, codeNotFound},
	{ports.ErrGroupNotFound, http.StatusNotFound, codeNotFound},
	{ports.ErrStreamGone, http.StatusNotFound, codeNotFound}, // kept only for its forks
	{ports.ErrWriterSeq, http.StatusConflict, codeConflict},
	{ports.ErrBadRequest, http.StatusBadRequest, codeBadRequest},
	{ports.ErrStreamConflict, http.StatusConflict, codeConflict},
	{ports.ErrStreamClosed, http.StatusConflict, codeClosed},
	{ports.ErrProducerGap, http.StatusConflict, codeSequenceGap},
	{ports.ErrProducerFenced, http.StatusForbidden, codeFenced},
	{ports.ErrMatchFailed, http.StatusPreconditionFailed, codeMatchFailed},
	{ports.ErrUnavailable, http.StatusServiceUnavailable, codeUnavailable},
	{ports.ErrUnauthenticated, http.StatusUnauthorized, codeUnauthorized},
	{ports.ErrForbidden, http.StatusForbidden, codeForbidden},
}

// renderError is echo's error handler: every failure a handler returns
// becomes a redirect or a JSON error here.
func (s *server) renderError(err error, c echo.Context) {
	if c.Response().Committed {
		return // an event stream already started; it just ends
	}
	if streamroute.AnswerRedirect(err, c, domain.ProtocolPico) {
		return
	}
	h := c.Response().Header()
	status, body := s.describe(err, h)
	body.Message = authgate.Relative(c.Request().Context(), body.Message)
	authgate.SetChallenge(h, status)
	streamroute.SetRetryAfter(h, status)
	if body.Error == codeMethodNotAllowed {
		h.Set(echo.HeaderAllow, allowedMethods)
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	b, _ := json.Marshal(body)
	_ = c.Blob(status, echo.MIMEApplicationJSON, b)
}

// describe returns the status and body for err, setting the headers that go
// with it.
func (s *server) describe(err error, h http.Header) (int, errorBody) {
	var pe *protocolError
	var he *echo.HTTPError
	var tooLarge *http.MaxBytesError
	var se *ports.StreamError
	switch {
	case errors.As(err, &pe):
		return pe.status, errorBody{Error: pe.code, Message: pe.message}
	case errors.As(err, new(*domain.GroupError)):
		status, code := groupStatus(err)
		return status, errorBody{Error: code, Message: err.Error()}
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, errorBody{Error: codeTooLarge,
			Message: fmt.Sprintf("request body is over the limit of %d bytes", tooLarge.Limit)}
	case errors.As(err, &he) && he.Code == http.StatusMethodNotAllowed:
		return he.Code, errorBody{Error: codeMethodNotAllowed, Message: "method not allowed; use " + allowedMethods}
	case errors.As(err, &se):
		return s.streamErrorBody(se, h)
	case errors.As(err, new(*ports.RedirectError)):
		return http.StatusServiceUnavailable, errorBody{Error: codeUnavailable, Message: "the stream's owner has no address for this protocol"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, errorBody{Error: codeUnavailable, Message: "request ended before the service answered"}
	}
	for _, m := range serviceErrorCodes {
		if errors.Is(err, m.kind) {
			return m.status, errorBody{Error: m.code, Message: err.Error()}
		}
	}
	s.log.Error("pico request failed", "err", err)
	return http.StatusInternalServerError, errorBody{Error: codeInternal, Message: "internal error"}
}

func (s *server) streamErrorBody(se *ports.StreamError, h http.Header) (int, errorBody) {
	status, code := http.StatusInternalServerError, codeInternal
	for _, m := range serviceErrorCodes {
		if errors.Is(se.Kind, m.kind) {
			status, code = m.status, m.code
			break
		}
	}
	if code == codeInternal {
		s.log.Error("pico request failed", "err", se)
		return status, errorBody{Error: code, Message: "internal error"}
	}
	body := errorBody{Error: code, Message: se.Error()}
	if se.HasNext {
		next := se.Next
		body.NextSeq = &next
		headerval.SetUint(h, headerNextSeq, next)
	}
	if se.Closed {
		h.Set(headerClosed, "true")
	}
	switch code {
	case codeFenced:
		headerval.SetUint(h, headerProducerEpoch, se.Verdict().Epoch)
	case codeSequenceGap:
		headerval.SetUint(h, headerExpectedSeq, se.Verdict().Expected)
		headerval.SetUint(h, headerReceivedSeq, se.Verdict().Received)
	}
	return status, body
}
