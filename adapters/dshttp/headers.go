package dshttp

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/cors"
	"github.com/picomq/pico/domain"
)

// The keys of the headers an append reads and writes, in canonical form,
// so that they are looked up and set as they are (see headerval.Put): the
// keys of a request's header are canonical.
var (
	keyContentType   = http.CanonicalHeaderKey(echo.HeaderContentType)
	keyNextOffset    = http.CanonicalHeaderKey(headerNextOffset)
	keyClosed        = http.CanonicalHeaderKey(headerClosed)
	keySeq           = http.CanonicalHeaderKey(headerSeq)
	keyProducerID    = http.CanonicalHeaderKey(headerProducerID)
	keyProducerEpoch = http.CanonicalHeaderKey(headerProducerEpoch)
	keyProducerSeq   = http.CanonicalHeaderKey(headerProducerSeq)
)

// Durable Streams headers.
const (
	headerNextOffset    = "Stream-Next-Offset"
	headerUpToDate      = "Stream-Up-To-Date"
	headerClosed        = "Stream-Closed"
	headerCursor        = "Stream-Cursor"
	headerTTL           = "Stream-TTL"
	headerExpiresAt     = "Stream-Expires-At"
	headerSchema        = "Stream-Schema"
	headerSchemaCheck   = "Stream-Schema-Validate"
	headerSeq           = "Stream-Seq"
	headerSSEEncoding   = "Stream-SSE-Data-Encoding"
	headerForkedFrom    = "Stream-Forked-From"
	headerForkOffset    = "Stream-Fork-Offset"
	headerForkSubOffset = "Stream-Fork-Sub-Offset"
	headerProducerID    = "Producer-Id"
	headerProducerEpoch = "Producer-Epoch"
	headerProducerSeq   = "Producer-Seq"
	headerExpectedSeq   = "Producer-Expected-Seq"
	headerReceivedSeq   = "Producer-Received-Seq"
)

const (
	cacheNoStore = "no-store"
	cacheNoCache = "no-cache"
	// cacheHistory is for chunks behind the tail, which never change.
	cacheHistory   = "public, max-age=60, stale-while-revalidate=300"
	allowedMethods = "GET, POST, PUT, DELETE, HEAD, OPTIONS"
	textPlain      = "text/plain; charset=utf-8"
	jsonType       = "application/json"
)

// exposedHeaders are the response headers a cross-origin script may read.
var exposedHeaders = strings.Join([]string{
	headerNextOffset, headerCursor, headerUpToDate, headerClosed, "ETag", "Location",
	headerProducerEpoch, headerProducerSeq, headerExpectedSeq, headerReceivedSeq, headerSSEEncoding,
	headerSchema, headerSchemaCheck,
}, ", ")

// allowedRequestHeaders are the request headers a cross-origin script may
// send. If-None-Match lets browsers revalidate chunks.
var allowedRequestHeaders = strings.Join([]string{
	"Content-Type", "Authorization", headerSeq, headerTTL, headerExpiresAt, headerClosed, "If-None-Match",
	headerProducerID, headerProducerEpoch, headerProducerSeq, headerForkedFrom, headerForkOffset, headerForkSubOffset,
	headerSchema, headerSchemaCheck,
}, ", ")

// commonHeaders sets the headers every response carries, errors included
// (see cors.ResponseHeaders); Durable Streams also lets any origin embed
// a stream's bytes.
var commonHeaders = cors.ResponseHeaders(exposedHeaders, "cross-origin")

// preflight answers a CORS preflight on any path.
func preflight(c echo.Context) error { return cors.Preflight(c, allowedMethods, allowedRequestHeaders) }

// header returns a request header's first value and whether the header
// was sent at all: Header.Get cannot tell absent from empty.
func header(h http.Header, name string) (string, bool) { return first(h.Values(name)) }

// first is a header's first value, and whether it has any.
func first(v []string) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// closedHeader reads Stream-Closed: only "true" (any case) counts; any
// other value means absent.
func closedHeader(h http.Header) bool {
	v, _ := first(h[keyClosed])
	return strings.EqualFold(v, "true")
}

// contentTypeOf is a stream's content type as stored, or the default for
// a stream stored without one.
func contentTypeOf(cfg domain.StreamConfig) string {
	if cfg.ContentType == "" {
		return domain.DefaultContentType
	}
	return cfg.ContentType
}

func isJSON(contentType string) bool { return domain.IsJSON(contentType) }
