package picoclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The server's refusals, for errors.Is: an *APIError is each of these whose
// code it carries.
var (
	ErrNotFound     = errors.New("stream not found")
	ErrConflict     = errors.New("conflict with the stream's state")
	ErrClosed       = errors.New("stream closed")
	ErrSequenceGap  = errors.New("producer sequence gap")
	ErrFenced       = errors.New("producer fenced by a newer epoch")
	ErrMatchFailed  = errors.New("stream tail is not the one matched")
	ErrUnauthorized = errors.New("no valid credential")
	ErrForbidden    = errors.New("credential does not allow this")
	ErrUnavailable  = errors.New("stream unavailable for now")
)

// codeErrors maps the error codes of Pico's JSON error bodies.
var codeErrors = map[string]error{
	"not_found":    ErrNotFound,
	"conflict":     ErrConflict,
	"closed":       ErrClosed,
	"sequence_gap": ErrSequenceGap,
	"fenced":       ErrFenced,
	"match_failed": ErrMatchFailed,
	"unauthorized": ErrUnauthorized,
	"forbidden":    ErrForbidden,
	"unavailable":  ErrUnavailable,

	"unknown_member":        ErrUnknownMember,
	"illegal_generation":    ErrIllegalGeneration,
	"rebalance_in_progress": ErrRebalanceInProgress,
}

// APIError is a non-2xx answer from the server. errors.Is matches it against
// the Err* values above.
type APIError struct {
	Status  int
	Code    string // e.g. "conflict", "not_found", "match_failed"
	Message string
	// NextSeq is the stream's tail when the server reports it (conflicts,
	// closed streams, failed matches).
	NextSeq *uint64
	// ExpectedSeq and ReceivedSeq qualify a sequence gap; Epoch is the
	// producer's current epoch when it is fenced.
	ExpectedSeq, ReceivedSeq, Epoch *uint64
	// RetryAfter is the wait the server asked for (503s), 0 if none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Is reports whether e is the refusal target names.
func (e *APIError) Is(target error) bool {
	if known, ok := codeErrors[e.Code]; ok {
		return known == target
	}
	return statusErrors[e.Status] == target
}

// statusErrors name the bodiless answers (HEAD, a routing 503) by status.
var statusErrors = map[int]error{
	http.StatusNotFound:           ErrNotFound,
	http.StatusUnauthorized:       ErrUnauthorized,
	http.StatusForbidden:          ErrForbidden,
	http.StatusServiceUnavailable: ErrUnavailable,
}

// NotFound reports whether err is the server saying the stream does not
// exist; it is errors.Is(err, ErrNotFound).
func NotFound(err error) bool { return errors.Is(err, ErrNotFound) }

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
		e.NextSeq = optionalUint(h, hdrNextSeq)
	}
	e.ExpectedSeq, e.ReceivedSeq = optionalUint(h, hdrExpectedSeq), optionalUint(h, hdrReceivedSeq)
	if e.Code == "fenced" {
		e.Epoch = optionalUint(h, hdrProducerEpoch)
	}
	if secs, err := strconv.ParseUint(h.Get("Retry-After"), 10, 16); err == nil {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}

// optionalUint is a decimal header's value, nil when absent or malformed:
// an error's details never hide the error.
func optionalUint(h http.Header, name string) *uint64 {
	if n, ok, err := headerUint(h, name); ok && err == nil {
		return &n
	}
	return nil
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
