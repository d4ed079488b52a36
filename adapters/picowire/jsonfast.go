package picowire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/picomq/pico/domain"
)

// A JSON batch is decoded in one pass of encoding/json into the shapes
// below, each member kept as raw bytes of the input and checked afterwards.
// Anything unexpected sends the batch down the careful path of
// DecodeJSONBatch, which decodes level by level (several passes over the
// bytes) and explains the problem; a valid batch never needs it.
type (
	jsonBatchIn struct {
		Records *[]*jsonRecordIn `json:"records"` // a null item stays nil
	}
	jsonRecordIn struct {
		Key        jsonRaw `json:"key"`
		KeyB64     jsonRaw `json:"key_b64"`
		Body       jsonRaw `json:"body"`
		BodyB64    jsonRaw `json:"body_b64"`
		Headers    jsonRaw `json:"headers"`
		HeadersB64 jsonRaw `json:"headers_b64"`
	}
	// jsonRaw is a member's raw JSON, aliasing the input; nil when absent.
	jsonRaw []byte
)

func (r *jsonRaw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// decodeJSONBatchFast decodes a valid batch; ok is false when the batch is
// not plainly valid, and the careful path must decide.
func decodeJSONBatchFast(b []byte, lim BatchLimits) ([]domain.Record, bool) {
	if !keysAreExact(b) {
		return nil, false
	}
	var in jsonBatchIn
	if !unmarshalKnown(b, &in) || in.Records == nil {
		return nil, false
	}
	items := *in.Records
	if len(items) == 0 || overLimit(uint64(len(items)), lim.MaxRecords) {
		return nil, false
	}
	records := make([]domain.Record, len(items))
	for i, item := range items {
		if item == nil || !item.decode(&records[i], lim.MaxHeaders) {
			return nil, false
		}
	}
	return records, true
}

// unmarshalKnown decodes b, one JSON value, into v; false for a member v
// has no field for, and for anything after the value.
func unmarshalKnown(b []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	return len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) == 0
}

func (in *jsonRecordIn) decode(rec *domain.Record, maxHeaders int) bool {
	if in.BodyB64 != nil || in.KeyB64 != nil || in.HeadersB64 != nil ||
		!validMember(in.Body) || !validMember(in.Headers) || !validMember(in.Key) {
		return false // base64 and odd members take the careful path
	}
	if in.Key != nil {
		key, ok := plainString(in.Key)
		if !ok {
			return false
		}
		rec.Key = key[:len(key):len(key)] // "" is the empty key, not none
	}
	if in.Body != nil {
		body, ok := plainString(in.Body)
		if !ok {
			return false
		}
		if len(body) > 0 {
			rec.Body = body
		}
	}
	if in.Headers == nil {
		return true
	}
	var members map[string]jsonRaw
	if json.Unmarshal(in.Headers, &members) != nil || overLimit(uint64(len(members)), maxHeaders) {
		return false
	}
	for key, raw := range members {
		value, ok := plainString(raw)
		if !ok || !utf8.ValidString(key) {
			return false
		}
		rec.Headers = append(rec.Headers, domain.Header{Key: key, Value: string(value)})
	}
	slices.SortFunc(rec.Headers, func(a, b domain.Header) int { return strings.Compare(a.Key, b.Key) })
	return true
}

// validMember: absent, or present and not null.
func validMember(raw jsonRaw) bool {
	return raw == nil || !bytes.Equal(raw, []byte("null"))
}

// plainString returns the contents of a JSON string without escapes and
// with valid UTF-8 (the common case, needing no decoding); ok is false for
// anything else.
func plainString(raw jsonRaw) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return nil, false
	}
	return s, true
}

// keysAreExact reports whether no member name in b could match one of the
// batch's member names other than exactly. encoding/json matches struct
// fields case-insensitively ("Body" would fill body); the careful path does
// not, so the fast path takes only input where that cannot matter: every
// key is plain ASCII without escapes, and none equals a field name in
// another case. Nor may "records" come twice: encoding/json would decode
// the second array into the first one's records, merging them, where the
// careful path keeps the second alone (a header named "records" also
// counts, and merely takes the careful path). It scans strings by their
// quotes, so bodies are skipped.
func keysAreExact(b []byte) bool {
	records := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, plain := stringEnd(b, i+1)
		if end < 0 {
			return false
		}
		if isKey(b, end+1) {
			key := b[i+1 : end]
			if string(key) == "records" {
				records++
			}
			if !exactKey(key, plain) || records > 1 {
				return false
			}
		}
		i = end
	}
	return true
}

// stringEnd returns the index of the quote closing a string that starts at
// from, and whether the string is plain ASCII without escapes.
func stringEnd(b []byte, from int) (int, bool) {
	plain := true
	for j := from; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			plain = false
			j++
		case c == '"':
			return j, plain
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return -1, false
}

// isKey reports whether the string ending before at is a member name: the
// next byte past white space is a colon.
func isKey(b []byte, at int) bool {
	for ; at < len(b); at++ {
		switch b[at] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

var batchMemberNames = append([]string{"records"}, recordMembers...)

func exactKey(key []byte, plain bool) bool {
	for _, name := range batchMemberNames {
		if string(key) == name {
			return true
		}
	}
	if !plain {
		return false
	}
	for _, name := range batchMemberNames {
		if strings.EqualFold(string(key), name) {
			return false
		}
	}
	return true
}
