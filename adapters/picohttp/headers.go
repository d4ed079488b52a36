package picohttp

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/cors"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/adapters/picowire"
)

// Pico protocol headers.
const (
	headerNextSeq       = "Pico-Next-Seq"
	headerStartSeq      = "Pico-Start-Seq"
	headerUpToDate      = "Pico-Up-To-Date"
	headerClosed        = "Pico-Closed"
	headerCursor        = "Pico-Cursor"
	headerTimestamp     = "Pico-Timestamp"
	headerTTL           = "Pico-TTL"
	headerRetention     = "Pico-Retention"
	headerSchema        = "Pico-Schema"
	headerSchemaCheck   = "Pico-Schema-Validate"
	headerExpiresAt     = "Pico-Expires-At"
	headerMatchSeq      = "Pico-Match-Seq"
	headerTrimSeq       = "Pico-Trim-Seq"
	headerProducerID    = "Pico-Producer-Id"
	headerProducerEpoch = "Pico-Producer-Epoch"
	headerProducerSeq   = "Pico-Producer-Seq"
	headerExpectedSeq   = "Pico-Expected-Seq"
	headerReceivedSeq   = "Pico-Received-Seq"
	headerLastEventID   = "Last-Event-ID"
)

const (
	cacheNoStore   = "no-store"
	cacheNoCache   = "no-cache"
	cacheImmutable = "public, max-age=60, stale-while-revalidate=300"
	allowedMethods = "GET, PUT, POST, DELETE, HEAD, OPTIONS, PATCH"
)

// exposedHeaders are the response headers a cross-origin script may read.
var exposedHeaders = strings.Join([]string{
	headerNextSeq, headerStartSeq, headerUpToDate, headerClosed, headerCursor, headerTimestamp,
	headerTTL, headerRetention, headerExpiresAt, headerProducerID, headerProducerEpoch, headerProducerSeq,
	headerSchema, headerSchemaCheck, headerExpectedSeq, headerReceivedSeq, "ETag", "Location",
}, ", ")

// allowedRequestHeaders are the request headers a cross-origin script may send.
var allowedRequestHeaders = strings.Join([]string{
	"Content-Type", "If-None-Match", headerLastEventID, "Authorization",
	headerTTL, headerRetention, headerExpiresAt, headerClosed, headerMatchSeq, headerTrimSeq,
	headerSchema, headerSchemaCheck, headerProducerID, headerProducerEpoch, headerProducerSeq,
}, ", ")

// commonHeaders sets the headers every response carries, errors included.
var commonHeaders = cors.ResponseHeaders(exposedHeaders, "")

// preflight answers a CORS preflight on any path.
func preflight(c echo.Context) error { return cors.Preflight(c, allowedMethods, allowedRequestHeaders) }

// optionalUint parses a strict unsigned integer from a header or query
// value; an empty value is absent.
func optionalUint(field, value string) (v uint64, present bool, err error) {
	if value == "" {
		return 0, false, nil
	}
	v, err = headerval.ParseUint(value)
	if err != nil {
		return 0, true, badUint(field, value)
	}
	return v, true, nil
}

func badUint(field, value string) error {
	if isCanonicalDigits(value) {
		return badRequest("%s is out of range (at most %d), got %s", field, uint64(1<<63-1), headerval.Clip(value))
	}
	return badRequest("%s must be a non-negative integer without leading zeros, got %s", field, headerval.Clip(value))
}

func isCanonicalDigits(s string) bool {
	return headerval.IsDigits(s) && (s[0] != '0' || len(s) == 1)
}

// boolHeader parses a boolean header.
func boolHeader(r *http.Request, name string) (bool, error) {
	v := r.Header.Get(name)
	b, err := picowire.ParseBool(v)
	if err != nil {
		return false, badRequest("%s must be true or false, got %s", name, headerval.Clip(v))
	}
	return b, nil
}
