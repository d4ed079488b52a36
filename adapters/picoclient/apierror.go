package picoclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// APIError is a non-2xx answer from the server.
type APIError struct {
	Status  int
	Code    string // e.g. "conflict", "not_found", "match_failed"
	Message string
	// NextSeq is the stream's tail when the server reports it (conflicts,
	// closed streams, failed matches).
	NextSeq *uint64
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// NotFound reports whether err is the server saying the stream does not
// exist.
func NotFound(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status == http.StatusNotFound
}

// errorBody is the Pico JSON error body.
type errorBody struct {
	Error   string  `json:"error"`
	Message string  `json:"message"`
	NextSeq *uint64 `json:"next_seq"`
}

// newAPIError builds the error from whatever the server sent: the JSON body,
// or for bodiless answers (HEAD, 404, a routing 503) the status and X-Error.
func newAPIError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{Status: status}
	var b errorBody
	if json.Unmarshal(body, &b) == nil && b.Error != "" {
		e.Code, e.Message, e.NextSeq = b.Error, b.Message, b.NextSeq
	} else {
		e.Code = statusCode(status)
		e.Message = plainMessage(h, body)
	}
	if e.NextSeq == nil {
		if n, ok, err := headerUint(h, hdrNextSeq); ok && err == nil {
			e.NextSeq = &n
		}
	}
	return e
}

// statusCode names a status the way error codes are written: "not_found".
func statusCode(status int) string {
	text := http.StatusText(status)
	if text == "" {
		return "http_error"
	}
	return strings.ReplaceAll(strings.ToLower(text), " ", "_")
}

// plainMessage is the text of a non-JSON error, kept to one short line.
func plainMessage(h http.Header, body []byte) string {
	msg := h.Get("X-Error")
	if msg == "" && !strings.Contains(h.Get("Content-Type"), "html") {
		msg = string(body)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return msg
}
