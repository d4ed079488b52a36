package dshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/domain"
)

// maxJSONMessages bounds the messages one JSON append stores, as the Pico
// protocol bounds its batches.
const maxJSONMessages = 65536

// bodyRecords turns a request body into the records it stores in a stream
// of contentType: for JSON, one per message; otherwise the body as one
// record. creating allows an empty JSON array (a PUT of no messages).
func bodyRecords(contentType string, body []byte, creating bool) ([]domain.Record, error) {
	switch {
	case len(body) == 0:
		return nil, nil
	case isJSON(contentType):
		return jsonMessages(body, creating)
	default:
		return []domain.Record{{Body: body}}, nil
	}
}

// jsonMessages splits a JSON body into messages: the elements of a
// top-level array (flattened one level only), or else the one value. Each
// is stored compacted, so it fits on one line of an event stream.
//
// The body is checked and compacted in one pass (json.Compact refuses
// invalid JSON), and the messages are cut from the compacted bytes, which
// they share: the stream service checks each again, as it does whoever
// wrote it.
func jsonMessages(body []byte, allowEmpty bool) ([]domain.Record, error) {
	var buf bytes.Buffer
	buf.Grow(len(body))
	if json.Compact(&buf, body) != nil {
		return nil, badRequest("body is not valid JSON (UTF-8 text)")
	}
	if at := domain.InvalidText(body); at >= 0 {
		return nil, textError(body, at)
	}
	compact := buf.Bytes()
	if compact[0] != '[' {
		return []domain.Record{{Body: compact}}, nil
	}
	records, ok := arrayElements(compact)
	switch {
	case !ok:
		return nil, statusError(http.StatusRequestEntityTooLarge, "a JSON append holds at most %d messages", maxJSONMessages)
	case len(records) == 0 && !allowEmpty:
		return nil, badRequest("an empty JSON array appends nothing")
	}
	return records, nil
}

// arrayElements cuts the elements out of a compacted JSON array that
// json.Compact has checked: outside strings, a comma at the top depth ends
// one. ok is false past maxJSONMessages.
func arrayElements(array []byte) (records []domain.Record, ok bool) {
	start, scan := 1, jsonScan{}
	cut := func(end int) bool {
		if len(records) == maxJSONMessages {
			return false
		}
		records = append(records, domain.Record{Body: array[start:end:end]})
		start = end + 1
		return true
	}
	for i := 1; i < len(array)-1; i++ {
		if c := array[i]; scan.step(c) && c == ',' && scan.depth == 0 && !cut(i) {
			return nil, false
		}
	}
	if len(array) > 2 && !cut(len(array)-1) {
		return nil, false
	}
	return records, true
}

// pageBody is the body of a read: for JSON streams one array of the
// messages, otherwise the record bodies back to back.
func pageBody(contentType string, records []domain.Record) []byte {
	n := 2 + len(records)
	for _, r := range records {
		n += len(r.Body)
	}
	return appendPageBody(make([]byte, 0, n), contentType, records)
}

// appendPageBody appends pageBody's bytes to out.
func appendPageBody(out []byte, contentType string, records []domain.Record) []byte {
	if !isJSON(contentType) {
		for _, r := range records {
			out = append(out, r.Body...)
		}
		return out
	}
	out = append(out, '[')
	for i, r := range records {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r.Body...)
	}
	return append(out, ']')
}

// readBody reads the request body, at most cfg.MaxBodyBytes of it.
func (s *server) readBody(c echo.Context) ([]byte, error) {
	body, err := livehttp.ReadBody(c.Response().Writer, c.Request(), s.cfg.MaxBodyBytes)
	if livehttp.BodyTimedOut(err) {
		return nil, statusError(http.StatusRequestTimeout, "%v", err)
	}
	if err != nil && !errors.As(err, new(*http.MaxBytesError)) {
		return nil, badRequest("cannot read the request body: %v", err)
	}
	return body, err
}
