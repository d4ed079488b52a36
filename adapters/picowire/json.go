package picowire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/picomq/pico/domain"
)

// DecodeJSONBatch decodes a JSON batch request body:
//
//	{"records": [{"body": "text", "body_b64": "base64", "headers": {"k": "v"}}, ...]}
//
// records must be a non-empty array within the limit; body_b64 (standard
// base64, padded) wins over body; a missing body is empty; header values
// must be strings. Present fields must have their type: null is no string
// or object. Unknown fields are ignored. A key given twice keeps its last
// value, and decoded headers are sorted by key, as JSON objects are
// unordered. Decoded records have no timestamp.
func DecodeJSONBatch(b []byte, lim BatchLimits) ([]domain.Record, error) {
	if records, ok := decodeJSONBatchFast(b, lim); ok {
		return records, nil
	}
	return decodeJSONBatchCareful(b, lim)
}

// decodeJSONBatchCareful decodes level by level: slower than the fast path,
// and it names exactly what is wrong.
func decodeJSONBatchCareful(b []byte, lim BatchLimits) ([]domain.Record, error) {
	var top map[string]json.RawMessage
	if err := unmarshalJSON(b, "object", &top); err != nil {
		return nil, malformed("batch %v", err)
	}
	raw, ok := top["records"]
	if !ok {
		return nil, malformed("records missing")
	}
	var items []json.RawMessage
	if err := unmarshalJSON(raw, "array", &items); err != nil {
		return nil, malformed("records %v", err)
	}
	if len(items) == 0 {
		return nil, malformed("empty batch")
	}
	if overLimit(uint64(len(items)), lim.MaxRecords) {
		return nil, malformed("batch of %d records, the limit is %d", len(items), max(lim.MaxRecords, 0))
	}
	records := make([]domain.Record, len(items))
	for i, item := range items {
		var fields jsonRecordFields
		if err := unmarshalJSON(item, "object", &fields); err != nil {
			return nil, malformed("records[%d] %v", i, err)
		}
		var err error
		records[i].Headers, records[i].Body, err = fields.headersAndBody(lim.MaxHeaders)
		if err != nil {
			return nil, malformed("records[%d]: %v", i, err)
		}
	}
	return records, nil
}

// EncodeJSONBatch encodes records as a JSON batch request body (clients).
// Timestamps are not sent. Headers are written sorted by key; of a key
// given twice only the last value is written, as a JSON object holds one.
func EncodeJSONBatch(records []domain.Record) []byte {
	batch := jsonBatchOut{Records: make([]jsonRecordOut, len(records))}
	for i := range records {
		batch.Records[i] = newJSONRecordOut(&records[i])
	}
	return marshalJSON(batch)
}

// EncodeJSONRecords encodes a read page as a JSON array:
//
//	[{"seq": n, "timestamp": ms, "headers": {...}, "body": "text"}, ...]
//
// headers is omitted when empty; a body that is not valid UTF-8 is sent as
// "body_b64" (standard base64) instead of "body". Headers are sorted by key
// and a key given twice keeps its last value. An empty page is [].
func EncodeJSONRecords(records []SeqRecord) []byte {
	page := make([]jsonSeqRecordOut, len(records))
	for i := range records {
		page[i] = jsonSeqRecordOut{
			Seq:           records[i].Seq,
			Timestamp:     records[i].TimestampMs,
			jsonRecordOut: newJSONRecordOut(&records[i].Record),
		}
	}
	return marshalJSON(page)
}

// DecodeJSONRecords decodes a JSON read page (used by clients). seq (an
// unsigned integer) and timestamp (an integer) are required; headers and
// body are read as in DecodeJSONBatch. An empty page is valid.
func DecodeJSONRecords(b []byte, lim BatchLimits) ([]SeqRecord, error) {
	var items []json.RawMessage
	if err := unmarshalJSON(b, "array", &items); err != nil {
		return nil, malformed("page %v", err)
	}
	if overLimit(uint64(len(items)), lim.MaxRecords) {
		return nil, malformed("page of %d records, the limit is %d", len(items), max(lim.MaxRecords, 0))
	}
	records := make([]SeqRecord, len(items))
	for i, item := range items {
		var fields jsonRecordFields
		if err := unmarshalJSON(item, "object", &fields); err != nil {
			return nil, malformed("page[%d] %v", i, err)
		}
		if err := fields.seqRecord(lim.MaxHeaders, &records[i]); err != nil {
			return nil, malformed("page[%d]: %v", i, err)
		}
	}
	return records, nil
}

// jsonRecordFields are the members of one record object.
type jsonRecordFields map[string]json.RawMessage

func (f jsonRecordFields) seqRecord(maxHeaders int, rec *SeqRecord) error {
	if err := f.number("seq", &rec.Seq, "an unsigned integer"); err != nil {
		return err
	}
	if err := f.number("timestamp", &rec.TimestampMs, "an integer"); err != nil {
		return err
	}
	var err error
	rec.Headers, rec.Body, err = f.headersAndBody(maxHeaders)
	return err
}

// number decodes the required integer member name into v (a *uint64 or
// *int64); encoding/json rejects fractions, exponents and overflow.
func (f jsonRecordFields) number(name string, v any, kind string) error {
	raw, ok := f[name]
	if !ok {
		return fmt.Errorf("%s missing", name)
	}
	if jsonKind(raw) != "number" || json.Unmarshal(raw, v) != nil {
		return fmt.Errorf("%s %s is not %s", name, quoteShort(string(bytes.TrimSpace(raw))), kind)
	}
	return nil
}

func (f jsonRecordFields) headersAndBody(maxHeaders int) ([]domain.Header, []byte, error) {
	headers, err := f.headers(maxHeaders)
	if err != nil {
		return nil, nil, err
	}
	body, err := f.body()
	if err != nil {
		return nil, nil, err
	}
	return headers, body, nil
}

// headers decodes the optional headers object, sorted by key.
func (f jsonRecordFields) headers(maxHeaders int) ([]domain.Header, error) {
	raw, ok := f["headers"]
	if !ok {
		return nil, nil
	}
	var members map[string]json.RawMessage
	if err := unmarshalJSON(raw, "object", &members); err != nil {
		return nil, fmt.Errorf("headers %v", err)
	}
	if overLimit(uint64(len(members)), maxHeaders) {
		return nil, fmt.Errorf("%d headers, the limit is %d", len(members), max(maxHeaders, 0))
	}
	if len(members) == 0 {
		return nil, nil
	}
	if err := headerNamesError(raw); err != nil {
		return nil, err
	}
	headers := make([]domain.Header, 0, len(members))
	for key, value := range members {
		s, err := jsonString(value)
		if err != nil {
			return nil, fmt.Errorf("header %s %v", quoteShort(key), err)
		}
		headers = append(headers, domain.Header{Key: key, Value: s})
	}
	slices.SortFunc(headers, func(a, b domain.Header) int { return strings.Compare(a.Key, b.Key) })
	return headers, nil
}

// body decodes body or body_b64 (which wins); both must be strings when
// present. An empty body is nil.
func (f jsonRecordFields) body() ([]byte, error) {
	var body []byte
	if raw, ok := f["body"]; ok {
		s, err := jsonString(raw)
		if err != nil {
			return nil, bodyError(err)
		}
		body = []byte(s)
	}
	if raw, ok := f["body_b64"]; ok {
		s, err := jsonString(raw)
		if err != nil {
			return nil, fmt.Errorf("body_b64 %v", err)
		}
		if body, err = base64.StdEncoding.Strict().DecodeString(s); err != nil {
			return nil, fmt.Errorf("body_b64 is not standard padded base64: %v", err)
		}
	}
	if len(body) == 0 {
		return nil, nil
	}
	return body, nil
}

// bodyError completes an error of body, saying how bytes travel when the
// string is not text.
func bodyError(err error) error {
	if errors.As(err, new(textFault)) {
		return fmt.Errorf("body %v; send bytes as body_b64", err)
	}
	return fmt.Errorf("body %v", err)
}

// jsonString decodes a JSON string value; anything else is an error naming
// what it is instead, and so is a string that is not sound text (see
// textError).
func jsonString(raw json.RawMessage) (string, error) {
	var s string
	if err := unmarshalJSON(raw, "string", &s); err != nil {
		return "", err
	}
	if err := textError(raw); err != nil {
		return "", err
	}
	return s, nil
}

// unmarshalJSON decodes b, a JSON value of the wanted kind, into v. Its
// errors complete a sentence about b, like "is a number, not a string",
// naming JSON kinds rather than Go types.
func unmarshalJSON(b []byte, want string, v any) error {
	// Checking the kind first avoids encoding/json's Go-typed message, and
	// rejects null, which it would take as "no change".
	if kind := jsonKind(b); kind != want && json.Valid(b) {
		return fmt.Errorf("is %s, not %s", withArticle(kind), withArticle(want))
	}
	if err := json.Unmarshal(b, v); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return fmt.Errorf("is invalid JSON at byte %d: %v", syntax.Offset, err)
		}
		return fmt.Errorf("is not %s: %v", withArticle(want), err)
	}
	return nil
}

// jsonKind names the kind of a JSON value from its first byte.
func jsonKind(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func withArticle(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "null", "empty":
		return kind
	}
	return "a " + kind
}

// JSON output shapes. Field order is the member order written, and
// encoding/json writes map keys sorted, which keeps the output deterministic.
type (
	jsonBatchOut struct {
		Records []jsonRecordOut `json:"records"`
	}
	jsonRecordOut struct {
		Headers map[string]string `json:"headers,omitempty"`
		Body    *string           `json:"body,omitempty"`
		BodyB64 *string           `json:"body_b64,omitempty"`
	}
	jsonSeqRecordOut struct {
		Seq       uint64 `json:"seq"`
		Timestamp int64  `json:"timestamp"`
		jsonRecordOut
	}
)

func newJSONRecordOut(r *domain.Record) jsonRecordOut {
	var out jsonRecordOut
	if len(r.Headers) > 0 {
		out.Headers = make(map[string]string, len(r.Headers))
		for _, h := range r.Headers {
			out.Headers[h.Key] = h.Value
		}
	}
	if utf8.Valid(r.Body) {
		s := string(r.Body)
		out.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(r.Body)
		out.BodyB64 = &s
	}
	return out
}

// marshalJSON encodes v without HTML escaping: bodies are data, and <, >
// and & written as \u003c and so on would only make them longer.
func marshalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings, integers and maps of strings reach here.
		panic(fmt.Sprintf("picowire: encoding JSON: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
