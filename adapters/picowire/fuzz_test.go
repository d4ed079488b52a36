package picowire

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
)

// fuzzLimits are small enough for the fuzzer to reach them.
var fuzzLimits = BatchLimits{MaxRecords: 8, MaxHeaders: 4}

// fuzzRecords are the records every wire fuzz target is seeded with.
func fuzzRecords() []SeqRecord {
	return []SeqRecord{
		{Seq: 0, Record: domain.Record{Body: []byte("hello")}},
		{Seq: 1, Record: domain.Record{TimestampMs: 1_700_000_000_000, Headers: []domain.Header{{Key: "k", Value: "v"}, {Key: "k", Value: "w"}, {Key: "", Value: "é"}}}},
		{Seq: math.MaxUint64, Record: domain.Record{TimestampMs: -1, Body: []byte{0xff, 0, 0xfe}}},
		{Seq: 3, Record: domain.Record{Headers: []domain.Header{{Key: "content-type", Value: "text/html"}}, Body: []byte(`<a href="x">&amp;</a>`)}},
		{Seq: 4, Record: domain.Record{Key: []byte("order-1"), Headers: []domain.Header{{Key: "raw", Value: "\xff\x00"}}, Body: []byte("k")}},
		{Seq: 5, Record: domain.Record{Key: []byte{}}},
		{Seq: 6, Record: domain.Record{Key: []byte{0x80, 0}}},
	}
}

func fuzzPlainRecords() []domain.Record {
	var plain []domain.Record
	for _, r := range fuzzRecords() {
		plain = append(plain, r.Record)
	}
	return plain
}

// checkMalformed fails unless a decoding error wraps ErrMalformed and
// returned no value.
func checkMalformed[V any](t *testing.T, got []V, err error) {
	t.Helper()
	if !errors.Is(err, domain.ErrMalformed) {
		t.Fatalf("error does not wrap ErrMalformed: %v", err)
	}
	if got != nil {
		t.Fatalf("value %v returned with error %v", got, err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	recs := fuzzPlainRecords()
	for i := range recs {
		f.Add(EncodeBatch(recs[:i+1]))
	}
	for _, b := range [][]byte{nil, {1}, {2, 0, 0, 0, 1}, {1, 0, 0, 0, 0}, {1, 0xff, 0xff, 0xff, 0xff},
		{1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeBatch(b, fuzzLimits)
		if err != nil {
			checkMalformed(t, got, err)
			return
		}
		// The layout has one encoding per batch, so it re-encodes exactly.
		again := EncodeBatch(got)
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding changed the bytes:\n got %x\nwant %x", again, b)
		}
		if again, err := DecodeBatch(again, fuzzLimits); err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("second decode = %+v, %v; want %+v", again, err, got)
		}
	})
}

func FuzzDecodeBatchResponse(f *testing.F) {
	recs := fuzzRecords()
	for i := range len(recs) + 1 {
		f.Add(EncodeBatchResponse(recs[:i]))
	}
	for _, b := range [][]byte{nil, {1}, {0}, {1, 0, 0, 0, 0, 0}, {1, 0xff, 0xff, 0xff, 0xff},
		{1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeBatchResponse(b, fuzzLimits)
		if err != nil {
			checkMalformed(t, got, err)
			return
		}
		again := EncodeBatchResponse(got)
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding changed the bytes:\n got %x\nwant %x", again, b)
		}
		if again, err := DecodeBatchResponse(again, fuzzLimits); err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("second decode = %+v, %v; want %+v", again, err, got)
		}
	})
}

func FuzzDecodeJSONBatch(f *testing.F) {
	recs := fuzzPlainRecords()
	for i := range recs {
		f.Add(EncodeJSONBatch(recs[i : i+1]))
	}
	f.Add(EncodeJSONBatch(recs))
	for _, s := range []string{``, `{}`, `[]`, `null`, `{"records":[]}`, `{"records":null}`, `{"records":[{}]}`,
		`{"records":[{"body":"a","body_b64":"YQ=="}]}`, `{"records":[{"headers":{"a":1}}]}`,
		`{"records":[{"headers":{"a":"1","a":"2"}}]}`, `{"records":[{"body":"\ud800"}]}`,
		`{"records":[{"body_b64":"YQ"}]}`, `{"records":[{"body_b64":"YR=="}]}`, `{"records":[{}],"records":[{"body":"x"}]}`,
		`{"records":[{"body":"x","headers":{"a":"1"}}],"records":[{"body":"y"}]}`,
		"{\"records\":[{\"body\":\"\xff\"}]}", `{"records":[{},{},{},{},{},{},{},{},{}]}`,
		`{"records":[{"body":"\ud83d\ude00\\ud800"}]}`, `{"records":[{"headers":{"\udc00":"v"}}]}`,
		`{"records":[{"headers":{"k":"\ud800\u0041"}}]}`, "{\"records\":[{\"headers\":{\"\xc3\":\"v\"}}]}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeJSONBatch(b, fuzzLimits)
		if err != nil {
			checkMalformed(t, got, err)
			return
		}
		checkNoReplacement(t, b, got)
		again, err := DecodeJSONBatch(EncodeJSONBatch(got), fuzzLimits)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip = %+v, %v; want %+v", again, err, got)
		}
		// The fast path must agree with the careful one wherever it answers.
		if fast, ok := decodeJSONBatchFast(b, fuzzLimits); ok {
			careful, err := decodeJSONBatchCareful(b, fuzzLimits)
			if err != nil || !reflect.DeepEqual(normalized(fast), normalized(careful)) {
				t.Fatalf("fast path %+v, careful path %+v, %v", fast, careful, err)
			}
		}
	})
}

// checkNoReplacement checks that decoding put no U+FFFD in the text of
// recs that input b did not hold, raw or escaped: invalid UTF-8 and lone
// surrogates are refused, not replaced. Bodies count only when b can name
// no body_b64 (whose bytes may hold anything), not even with escapes.
func checkNoReplacement(t *testing.T, b []byte, recs []domain.Record) {
	t.Helper()
	const fffd = "\uFFFD"
	lower := bytes.ToLower(b)
	sent := bytes.Count(b, []byte(fffd)) + bytes.Count(lower, []byte(`\ufffd`))
	bodies := !bytes.Contains(lower, []byte("b64")) && !bytes.Contains(lower, []byte(`\u00`))
	decoded := 0
	for _, r := range recs {
		for _, h := range r.Headers {
			decoded += strings.Count(h.Key, fffd) + strings.Count(h.Value, fffd)
		}
		if bodies {
			decoded += bytes.Count(r.Body, []byte(fffd))
		}
	}
	if decoded > sent {
		t.Fatalf("decoding %q made %d U+FFFD of %d sent: %+v", b, decoded, sent, recs)
	}
}

// normalized copies records with empty header and body slices as nil, so
// paths that differ only in aliasing compare equal.
func normalized(recs []domain.Record) []domain.Record {
	out := make([]domain.Record, len(recs))
	for i, r := range recs {
		out[i] = domain.Record{TimestampMs: r.TimestampMs, Key: r.Key, Headers: r.Headers, Body: append([]byte(nil), r.Body...)}
		if len(out[i].Headers) == 0 {
			out[i].Headers = nil
		}
		if len(out[i].Body) == 0 {
			out[i].Body = nil
		}
	}
	return out
}

func FuzzDecodeJSONRecords(f *testing.F) {
	recs := fuzzRecords()
	for i := range len(recs) + 1 {
		f.Add(EncodeJSONRecords(recs[:i]))
	}
	for _, s := range []string{``, `{}`, `null`, `[null]`, `[{}]`, `[{"seq":1,"timestamp":2}]`,
		`[{"seq":-1,"timestamp":2}]`, `[{"seq":1e2,"timestamp":2}]`, `[{"seq":18446744073709551616,"timestamp":0}]`,
		`[{"seq":1,"timestamp":-9223372036854775808,"headers":{"b":"1","a":"2"},"body_b64":"AA=="}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeJSONRecords(b, fuzzLimits)
		if err != nil {
			checkMalformed(t, got, err)
			return
		}
		plain := make([]domain.Record, len(got))
		for i := range got {
			plain[i] = got[i].Record
		}
		checkNoReplacement(t, b, plain)
		enc := EncodeJSONRecords(got)
		again, err := DecodeJSONRecords(enc, fuzzLimits)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip = %+v, %v; want %+v", again, err, got)
		}
		if reenc := EncodeJSONRecords(again); !bytes.Equal(reenc, enc) {
			t.Fatalf("encoding is not deterministic:\n got %s\nwant %s", reenc, enc)
		}
	})
}

// FuzzParseWire feeds one string to every parser of Pico query and header
// values here (the strict unsigned decimal has its own target in
// headerval, the stream config decoder in domain).
func FuzzParseWire(f *testing.F) {
	for _, s := range []string{"", "0", "00", "1", "-1", "-0", "-", "+1", " 1", "true", "TRUE", "False", "falſe",
		"9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
		"00000000000000000042", "-9223372036854775809", "1e3", "now",
		"\x01\x00\x00\x00trailing", "\x01\x05ab", "\x02\x00\x00\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseSeq(t, s)
		checkParseBool(t, s)
	})
}

func checkParseSeq(t *testing.T, s string) {
	v, err := ParseSeq(s)
	if err != nil {
		if !errors.Is(err, domain.ErrMalformed) {
			t.Fatalf("ParseSeq(%q): error does not wrap ErrMalformed: %v", s, err)
		}
		return
	}
	if strings.HasPrefix(s, "-") {
		if v != 0 {
			t.Fatalf("ParseSeq(%q) = %d, want 0 for a negative", s, v)
		}
		return
	}
	if again, err := ParseSeq(strconv.FormatUint(v, 10)); err != nil || again != v {
		t.Fatalf("ParseSeq(%q) = %d, but its canonical form parses to %d, %v", s, v, again, err)
	}
	if trimmed := strings.TrimLeft(s, "0"); trimmed != strings.TrimLeft(strconv.FormatUint(v, 10), "0") {
		t.Fatalf("ParseSeq(%q) = %d", s, v)
	}
}

func checkParseBool(t *testing.T, s string) {
	v, err := ParseBool(s)
	if err != nil {
		if !errors.Is(err, domain.ErrMalformed) {
			t.Fatalf("ParseBool(%q): error does not wrap ErrMalformed: %v", s, err)
		}
		return
	}
	if want := strconv.FormatBool(v); !strings.EqualFold(s, want) && !(s == "" && !v) {
		t.Fatalf("ParseBool(%q) = %v", s, v)
	}
}
