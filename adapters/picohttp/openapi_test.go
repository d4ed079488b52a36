package picohttp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/picowire"
)

// TestOpenAPIDocumentsTheProtocol: the embedded document names every header,
// query parameter, error code and status this package uses.
func TestOpenAPIDocumentsTheProtocol(t *testing.T) {
	doc := string(OpenAPI)
	if !strings.HasPrefix(doc, "openapi: 3.1") {
		t.Fatalf("document starts %q", doc[:min(len(doc), 20)])
	}
	if bytes.ContainsRune(OpenAPI, '\t') {
		t.Error("tabs in YAML")
	}
	words := []string{
		headerNextSeq, headerStartSeq, headerUpToDate, headerClosed, headerCursor, headerTimestamp, headerTTL,
		headerExpiresAt, headerMatchSeq, headerTrimSeq, headerProducerID, headerProducerEpoch, headerProducerSeq,
		headerExpectedSeq, headerReceivedSeq, headerLastEventID, "If-None-Match", "ETag", "Location",
		"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "X-Content-Type-Options",
		"name: seq", "name: count", "name: bytes", "name: format", "name: live", "name: prefix", "name: start_after", "name: limit",
		codeNotFound, codeBadRequest, codeTooLarge, codeConflict, codeClosed, codeSequenceGap, codeFenced,
		codeMatchFailed, codeUnavailable, codeMethodNotAllowed, codeInternal,
		picowire.BatchContentType, picowire.BatchJSONContentType, "text/event-stream", "event: control", "event: data", "keep-alive",
		cacheImmutable, `"next_seq"`, "has_more", "body_b64", "key_b64", "headers_b64", headerRetention,
		headerSchema, headerSchemaCheck, schemasPrefix + "{name}", streamsPrefix + "{stream}",
		groupsPath + ":", groupsPath + "/{group}/members/{member}/heartbeat:", groupsPath + "/{group}/offsets:",
		"unknown_member", "illegal_generation", "rebalance_in_progress", "capacity_exceeded",
	}
	for _, status := range []string{"200", "201", "204", "304", "307", "400", "403", "404", "405", "409", "412", "413", "429", "500", "503"} {
		words = append(words, `"`+status+`":`)
	}
	for _, w := range words {
		if !strings.Contains(doc, w) {
			t.Errorf("OpenAPI document does not mention %q", w)
		}
	}
}
