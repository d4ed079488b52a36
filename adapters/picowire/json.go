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
	"unsafe"

	"github.com/picomq/pico/domain"
)

// DecodeJSONBatch decodes a JSON batch request body:
//
//	{"records": [{"key": "text", "headers": {"k": "v"}, "headers_b64": {"k": "base64"}, "body": "text"}, ...]}
//
// records must be a non-empty array within the limit. Bytes that are not
// text travel as key_b64, headers_b64 values and body_b64 (standard base64,
// padded); key_b64 wins over key and body_b64 over body. A missing body is
// empty, a missing key none, and "key": "" the empty key. Present members
// must have their type: null is no string or object. A member the format
// does not have is an error, not ignored, so nothing a client sends is
// dropped. A header name given twice in one object keeps its last value;
// decoded headers are sorted by name (text values before byte values of
// the same name), as JSON objects are unordered. Decoded records have no
// timestamp.
func DecodeJSONBatch(b []byte, lim BatchLimits) ([]domain.Record, error) {
	if records, ok := decodeJSONBatchFast(b, lim); ok {
		return records, nil
	}
	return decodeJSONBatchCareful(b, lim)
}

// recordMembers are the members a record of a JSON batch may have.
var recordMembers = []string{"key", "key_b64", "headers", "headers_b64", "body", "body_b64"}

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
	if name := unknownMember(top, []string{"records"}); name != "" {
		return nil, malformed("batch member %s is not part of the format: a batch holds only records", quoteShort(name))
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
		if name := unknownMember(fields, recordMembers); name != "" {
			return nil, malformed("records[%d]: member %s is not part of the format (a record has %s)",
				i, quoteShort(name), strings.Join(recordMembers, ", "))
		}
		if err := fields.record(lim.MaxHeaders, &records[i]); err != nil {
			return nil, malformed("records[%d]: %v", i, err)
		}
	}
	return records, nil
}

// unknownMember returns a member of object that is not one of known, the
// first by name, or "".
func unknownMember[V any](object map[string]V, known []string) string {
	var first string
	for name := range object {
		if !slices.Contains(known, name) && (first == "" || name < first) {
			first = name
		}
	}
	return first
}

// EncodeJSONBatch encodes records as a JSON batch request body (clients).
// Timestamps are not sent. Headers are written sorted by name: a name's
// first text value in headers, its other values in headers_b64, where of a
// name given more than twice only the last is kept, as a JSON object holds
// one value of a name.
func EncodeJSONBatch(records []domain.Record) []byte {
	batch := jsonBatchOut{Records: make([]jsonRecordOut, len(records))}
	bodies := make([]string, len(records))
	for i := range records {
		batch.Records[i] = newJSONRecordOut(&records[i], &bodies[i])
	}
	return appendJSON(nil, batch)
}

// EncodeJSONRecords encodes a read page as a JSON array:
//
//	[{"seq": n, "timestamp": ms, "key": "text", "headers": {...}, "body": "text"}, ...]
//
// key is omitted for a record without one, headers and headers_b64 when
// empty; a key, header value or body that is not valid UTF-8 is sent in its
// _b64 member (standard base64) instead. Headers are as in EncodeJSONBatch.
// An empty page is [].
func EncodeJSONRecords(records []SeqRecord) []byte {
	return appendJSON(nil, jsonPage(len(records), func(i int) (uint64, *domain.Record) {
		return records[i].Seq, &records[i].Record
	}))
}

// AppendJSONRecords appends to b the page EncodeJSONRecords writes for
// records, the first of them at seq from.
func AppendJSONRecords(b []byte, from uint64, records []domain.Record) []byte {
	return appendJSON(b, jsonPage(len(records), func(i int) (uint64, *domain.Record) {
		return from + uint64(i), &records[i]
	}))
}

// jsonPage is the output shape of a page of n records, record(i) giving
// the seq and record of the i-th.
func jsonPage(n int, record func(i int) (uint64, *domain.Record)) []jsonSeqRecordOut {
	page, bodies := make([]jsonSeqRecordOut, n), make([]string, n)
	for i := range page {
		seq, r := record(i)
		page[i] = jsonSeqRecordOut{Seq: seq, Timestamp: r.TimestampMs, jsonRecordOut: newJSONRecordOut(r, &bodies[i])}
	}
	return page
}

// DecodeJSONRecords decodes a JSON read page (used by clients). seq (an
// unsigned integer) and timestamp (an integer) are required; the key,
// headers and body are read as in DecodeJSONBatch. Members it does not know
// are ignored, so that a client reads pages of newer servers. An empty page
// is valid.
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
	return f.record(maxHeaders, &rec.Record)
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

// record decodes the key, headers and body members into rec.
func (f jsonRecordFields) record(maxHeaders int, rec *domain.Record) error {
	key, err := f.bytesMember("key")
	if err != nil {
		return err
	}
	text, err := f.headers("headers", maxHeaders, 0, jsonString)
	if err != nil {
		return err
	}
	binary, err := f.headers("headers_b64", maxHeaders, len(text), base64String)
	if err != nil {
		return err
	}
	body, err := f.bytesMember("body")
	if err != nil {
		return err
	}
	rec.Key, rec.Headers = key, append(text, binary...)
	if len(body) > 0 {
		rec.Body = body
	}
	if len(rec.Headers) == 0 {
		rec.Headers = nil
	}
	slices.SortStableFunc(rec.Headers, func(a, b domain.Header) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// headers decodes the optional headers object member, sorted by name, its
// values decoded by value; the record has others already.
func (f jsonRecordFields) headers(member string, maxHeaders, others int,
	value func(json.RawMessage) (string, error)) ([]domain.Header, error) {
	raw, ok := f[member]
	if !ok {
		return nil, nil
	}
	var members map[string]json.RawMessage
	if err := unmarshalJSON(raw, "object", &members); err != nil {
		return nil, fmt.Errorf("%s %v", member, err)
	}
	if n := others + len(members); overLimit(uint64(n), maxHeaders) {
		return nil, fmt.Errorf("%d headers, the limit is %d", n, max(maxHeaders, 0))
	}
	if len(members) == 0 {
		return nil, nil
	}
	if err := headerNamesError(raw); err != nil {
		return nil, err
	}
	headers := make([]domain.Header, 0, len(members))
	for name, raw := range members {
		s, err := value(raw)
		if err != nil {
			where := ""
			if member != "headers" {
				where = " in " + member
			}
			return nil, fmt.Errorf("header %s%s %v", quoteShort(name), where, err)
		}
		headers = append(headers, domain.Header{Key: name, Value: s})
	}
	slices.SortFunc(headers, func(a, b domain.Header) int { return strings.Compare(a.Key, b.Key) })
	return headers, nil
}

// bytesMember decodes member (text) or member_b64 (base64, which wins);
// both must be strings when present. It returns nil when neither is, and
// an empty, non-nil slice for an empty value.
func (f jsonRecordFields) bytesMember(member string) ([]byte, error) {
	var out []byte
	if raw, ok := f[member]; ok {
		s, err := jsonString(raw)
		if err != nil {
			return nil, textMemberError(member, err)
		}
		out = []byte(s)
	}
	if raw, ok := f[member+"_b64"]; ok {
		s, err := base64String(raw)
		if err != nil {
			return nil, fmt.Errorf("%s_b64 %v", member, err)
		}
		out = []byte(s)
	}
	return out, nil
}

// base64String decodes a JSON string of standard padded base64.
func base64String(raw json.RawMessage) (string, error) {
	s, err := jsonString(raw)
	if err != nil {
		return "", err
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("is not standard padded base64: %v", err)
	}
	return string(b), nil
}

// textMemberError completes an error of a text member, saying how bytes
// travel when the string is not text.
func textMemberError(member string, err error) error {
	if errors.As(err, new(textFault)) {
		return fmt.Errorf("%s %v; send bytes as %s_b64", member, err, member)
	}
	return fmt.Errorf("%s %v", member, err)
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
		Key        *string           `json:"key,omitempty"`
		KeyB64     *string           `json:"key_b64,omitempty"`
		Headers    map[string]string `json:"headers,omitempty"`
		HeadersB64 map[string]string `json:"headers_b64,omitempty"`
		Body       *string           `json:"body,omitempty"`
		BodyB64    *string           `json:"body_b64,omitempty"`
	}
	jsonSeqRecordOut struct {
		Seq       uint64 `json:"seq"`
		Timestamp int64  `json:"timestamp"`
		jsonRecordOut
	}
)

// newJSONRecordOut is r's output shape; a text body goes in *body, which
// the caller provides so that a page's bodies take one allocation.
func newJSONRecordOut(r *domain.Record, body *string) jsonRecordOut {
	var out jsonRecordOut
	for _, h := range r.Headers {
		if _, taken := out.Headers[h.Key]; utf8.ValidString(h.Value) && !taken {
			out.Headers = setMember(out.Headers, h.Key, h.Value)
		} else {
			out.HeadersB64 = setMember(out.HeadersB64, h.Key, base64.StdEncoding.EncodeToString([]byte(h.Value)))
		}
	}
	if r.Key != nil {
		out.Key, out.KeyB64 = textOrBase64(r.Key)
	}
	if utf8.Valid(r.Body) {
		// The string aliases the body, which nothing writes while the
		// output is encoded: a page's bodies are not copied twice.
		*body = unsafe.String(unsafe.SliceData(r.Body), len(r.Body))
		out.Body = body
	} else {
		out.BodyB64 = new(base64.StdEncoding.EncodeToString(r.Body))
	}
	return out
}

func setMember(m map[string]string, name, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[name] = value
	return m
}

// textOrBase64 returns b as text when it is valid UTF-8 and as base64
// otherwise, the other one nil.
func textOrBase64(b []byte) (text, b64 *string) {
	if utf8.Valid(b) {
		s := string(b)
		return &s, nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return nil, &s
}

// appendJSON appends v's encoding to b, without HTML escaping: bodies are
// data, and <, > and & written as \u003c and so on would only make them
// longer.
func appendJSON(b []byte, v any) []byte {
	w := appendWriter{b}
	enc := json.NewEncoder(&w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings, integers and maps of strings reach here.
		panic(fmt.Sprintf("picowire: encoding JSON: %v", err))
	}
	return bytes.TrimSuffix(w.b, []byte("\n"))
}

// appendWriter appends what is written to b; json.Encoder writes a value
// in one Write from its own reused buffer.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
