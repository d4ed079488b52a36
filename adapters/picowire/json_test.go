package picowire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
	"pgregory.net/rapid"
)

func TestDecodeJSONBatch(t *testing.T) {
	in := `{"records": [
		{"body": "plain", "headers": {"b": "2", "a": "1", "a": "3"}},
		{"body_b64": "/w==", "body": "loses to body_b64"},
		{},
		{"body": "", "headers": {}},
		{"body": "\u00e9\ud83d\ude00", "body_b64": ""},
		{"key": "order-9", "headers": {"a": "t"}, "headers_b64": {"a": "/wA=", "0": ""}, "body": "x"},
		{"key": "", "key_b64": "gA=="},
		{"key": ""}
	]}`
	got, err := DecodeJSONBatch([]byte(in), BatchLimits{MaxRecords: 8, MaxHeaders: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.Record{
		{Headers: []domain.Header{{Key: "a", Value: "3"}, {Key: "b", Value: "2"}}, Body: []byte("plain")},
		{Body: []byte{0xff}},
		{},
		{},
		{},
		{Key: []byte("order-9"), Headers: []domain.Header{{Key: "0", Value: ""}, {Key: "a", Value: "t"}, {Key: "a", Value: "\xff\x00"}}, Body: []byte("x")},
		{Key: []byte{0x80}},
		{Key: []byte{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
}

// A member the format does not have is refused, never dropped: keys and
// byte-valued headers were once dropped in silence.
func TestDecodeJSONBatchRefusesUnknownMembers(t *testing.T) {
	for in, want := range map[string]string{
		`{"ignored": 1, "records": [{}]}`:                                            `batch member "ignored" is not part of the format`,
		`{"records": [{"body": "x", "partition": 1}]}`:                               `records[0]: member "partition" is not part of the format`,
		`{"records": [{}, {"Key": "k", "body": "x"}]}`:                               `records[1]: member "Key" is not part of the format`,
		`{"records": [{"body": "x", "extra": [1]}]}`:                                 `records[0]: member "extra"`,
		`{"records": [{"body": "x", "headers_b64": {"h": "YQ=="}, "timestamp": 5}]}`: `member "timestamp"`,
	} {
		recs, err := DecodeJSONBatch([]byte(in), BatchLimits{MaxRecords: 2, MaxHeaders: 2})
		if recs != nil {
			t.Errorf("%s: records %v returned with an error", in, recs)
		}
		wantMalformed(t, err, want)
	}
}

func TestDecodeJSONBatchRejects(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{``, []string{"batch is invalid JSON at byte 0"}},
		{`{"records": [{}]`, []string{"batch is invalid JSON"}},
		{`{"records": [{}]} x`, []string{"batch is invalid JSON at byte"}},
		{`{"records": [{},]}`, []string{"batch is invalid JSON"}},
		{`[{"body": "x"}]`, []string{"batch is an array, not an object"}},
		{`null`, []string{"batch is null, not an object"}},
		{`"records"`, []string{"batch is a string, not an object"}},
		{`{}`, []string{"records missing"}},
		{`{"Records": [{}]}`, []string{"records missing"}},
		{`{"records": null}`, []string{"records is null, not an array"}},
		{`{"records": {"body": "x"}}`, []string{"records is an object, not an array"}},
		{`{"records": []}`, []string{"empty batch"}},
		{`{"records": [{}, {}, {}]}`, []string{"batch of 3 records, the limit is 2"}},
		{`{"records": [{}, 7]}`, []string{"records[1] is a number, not an object"}},
		{`{"records": [null]}`, []string{"records[0] is null, not an object"}},
		{`{"records": [{"headers": ["a"]}]}`, []string{"records[0]: headers is an array, not an object"}},
		{`{"records": [{"headers": null}]}`, []string{"records[0]: headers is null, not an object"}},
		{`{"records": [{}, {"headers": {"a": "x", "n": 1}}]}`, []string{`records[1]: header "n" is a number, not a string`}},
		{`{"records": [{"headers": {"a": true}}]}`, []string{`records[0]: header "a" is a boolean, not a string`}},
		{`{"records": [{"headers": {"a": null}}]}`, []string{`records[0]: header "a" is null, not a string`}},
		{`{"records": [{"headers": {"a": {"b": "c"}}}]}`, []string{`header "a" is an object, not a string`}},
		{`{"records": [{"headers": {"a": "1", "b": "2", "c": "3"}}]}`, []string{"records[0]: 3 headers, the limit is 2"}},
		{`{"records": [{"body": 5}]}`, []string{"records[0]: body is a number, not a string"}},
		{`{"records": [{"body": null}]}`, []string{"records[0]: body is null, not a string"}},
		{`{"records": [{"body": ["x"]}]}`, []string{"records[0]: body is an array, not a string"}},
		{`{"records": [{"body_b64": 5}]}`, []string{"records[0]: body_b64 is a number, not a string"}},
		{`{"records": [{"body_b64": "YQ"}]}`, []string{"records[0]: body_b64 is not standard padded base64"}},
		{`{"records": [{"body_b64": "YQ=="}, {"body_b64": "a-_b"}]}`, []string{"records[1]: body_b64 is not standard padded base64"}},
		{`{"records": [{"body_b64": "YR=="}]}`, []string{"body_b64 is not standard padded base64"}}, // non-zero padding bits
		{`{"records": [{"body_b64": "!!!!"}]}`, []string{"body_b64 is not standard padded base64"}},
		{`{"records": [{"body": 5, "body_b64": "YQ=="}]}`, []string{"records[0]: body is a number"}},
		{`{"records": [{"key": 5}]}`, []string{"records[0]: key is a number, not a string"}},
		{`{"records": [{"key": null}]}`, []string{"records[0]: key is null, not a string"}},
		{`{"records": [{"key": "\udc00"}]}`, []string{"records[0]: key", "send bytes as key_b64"}},
		{`{"records": [{"key_b64": "a"}]}`, []string{"records[0]: key_b64 is not standard padded base64"}},
		{`{"records": [{"headers_b64": []}]}`, []string{"records[0]: headers_b64 is an array, not an object"}},
		{`{"records": [{"headers_b64": {"h": "%%"}}]}`, []string{`records[0]: header "h" in headers_b64 is not standard padded base64`}},
		{`{"records": [{"headers_b64": {"h": 1}}]}`, []string{`records[0]: header "h" in headers_b64 is a number, not a string`}},
		{`{"records": [{"headers": {"a": "1", "b": "2"}, "headers_b64": {"c": ""}}]}`, []string{"records[0]: 3 headers, the limit is 2"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			recs, err := DecodeJSONBatch([]byte(tc.in), BatchLimits{MaxRecords: 2, MaxHeaders: 2})
			if recs != nil {
				t.Errorf("records %v returned with an error", recs)
			}
			wantMalformed(t, err, tc.want...)
		})
	}
}

func TestEncodeJSONBatchOutput(t *testing.T) {
	got := string(EncodeJSONBatch([]domain.Record{
		{TimestampMs: 5, Headers: []domain.Header{{Key: "b", Value: "2"}, {Key: "a", Value: "1"}, {Key: "b", Value: "<3>"}}, Body: []byte(`<p class="x">&</p>`)},
		{Body: []byte{0xff, 0x00}},
		{},
	}))
	// b's second value goes in headers_b64: JSON holds one value of a name
	// per object, and both survive.
	want := `{"records":[{"headers":{"a":"1","b":"2"},"headers_b64":{"b":"PDM+"},"body":"<p class=\"x\">&</p>"},{"body_b64":"/wA="},{"body":""}]}`
	if got != want {
		t.Fatalf("EncodeJSONBatch:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeJSONRecordsOutput(t *testing.T) {
	for _, tc := range []struct {
		in   []SeqRecord
		want string
	}{
		{nil, `[]`},
		{[]SeqRecord{}, `[]`},
		{[]SeqRecord{
			{Seq: 7, Record: domain.Record{TimestampMs: 1_700_000_000_000, Body: []byte("x")}},
			{Seq: 18446744073709551615, Record: domain.Record{TimestampMs: -1, Headers: []domain.Header{{Key: "z", Value: "1"}, {Key: "y", Value: ""}}, Body: []byte{0xc3}}},
		}, `[{"seq":7,"timestamp":1700000000000,"body":"x"},` +
			`{"seq":18446744073709551615,"timestamp":-1,"headers":{"y":"","z":"1"},"body_b64":"ww=="}]`},
	} {
		if got := string(EncodeJSONRecords(tc.in)); got != tc.want {
			t.Errorf("EncodeJSONRecords:\n got %s\nwant %s", got, tc.want)
		}
	}
}

func TestDecodeJSONRecordsRejects(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{``, []string{"page is invalid JSON"}},
		{`{}`, []string{"page is an object, not an array"}},
		{`null`, []string{"page is null, not an array"}},
		{`[{"seq":1,"timestamp":1},{"seq":2,"timestamp":1},{"seq":3,"timestamp":1}]`, []string{"page of 3 records, the limit is 2"}},
		{`["x"]`, []string{"page[0] is a string, not an object"}},
		{`[{"timestamp": 1}]`, []string{"page[0]: seq missing"}},
		{`[{"seq": 1}]`, []string{"page[0]: timestamp missing"}},
		{`[{"seq": -1, "timestamp": 1}]`, []string{`page[0]: seq "-1" is not an unsigned integer`}},
		{`[{"seq": 1.5, "timestamp": 1}]`, []string{`seq "1.5" is not an unsigned integer`}},
		{`[{"seq": 1e3, "timestamp": 1}]`, []string{`seq "1e3" is not an unsigned integer`}},
		{`[{"seq": "1", "timestamp": 1}]`, []string{`seq "\"1\"" is not an unsigned integer`}},
		{`[{"seq": null, "timestamp": 1}]`, []string{`seq "null" is not an unsigned integer`}},
		{`[{"seq": 18446744073709551616, "timestamp": 1}]`, []string{"is not an unsigned integer"}},
		{`[{"seq": 1, "timestamp": 9223372036854775808}]`, []string{"timestamp", "is not an integer"}},
		{`[{"seq": 1, "timestamp": 1}, {"seq": 2, "timestamp": 1, "headers": {"a": 1}}]`, []string{`page[1]: header "a" is a number, not a string`}},
		{`[{"seq": 1, "timestamp": 1, "headers": {"a": "", "b": "", "c": ""}}]`, []string{"page[0]: 3 headers"}},
		{`[{"seq": 1, "timestamp": 1, "body_b64": "="}]`, []string{"page[0]: body_b64 is not standard padded base64"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			recs, err := DecodeJSONRecords([]byte(tc.in), BatchLimits{MaxRecords: 2, MaxHeaders: 2})
			if recs != nil {
				t.Errorf("records %v returned with an error", recs)
			}
			wantMalformed(t, err, tc.want...)
		})
	}
}

func TestDecodeJSONRecordsEmptyPage(t *testing.T) {
	recs, err := DecodeJSONRecords([]byte(` [ ] `), BatchLimits{})
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty page decodes to %v, %v", recs, err)
	}
}

func TestJSONErrorsQuoteKeysShort(t *testing.T) {
	in := `{"records": [{"headers": {"` + strings.Repeat("k", 5000) + `": 1}}]}`
	_, err := DecodeJSONBatch([]byte(in), BatchLimits{MaxRecords: 1, MaxHeaders: 1})
	wantMalformed(t, err, "is a number, not a string")
	if len(err.Error()) > 200 {
		t.Fatalf("message of %d bytes for a long key", len(err.Error()))
	}
}

func TestJSONBatchRoundTrip(t *testing.T) {
	lim := BatchLimits{MaxRecords: 20, MaxHeaders: 5}
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(wireRecordGen(), 1, 20).Draw(t, "records")
		b := EncodeJSONBatch(recs)
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		got, err := DecodeJSONBatch(b, lim)
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		want := make([]domain.Record, len(recs))
		for i, r := range recs {
			want[i] = domain.Record{Key: r.Key, Headers: asJSONHeaders(r.Headers), Body: r.Body}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

func TestJSONRecordsRoundTrip(t *testing.T) {
	lim := BatchLimits{MaxRecords: 20, MaxHeaders: 5}
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(seqRecordGen(), 0, 20).Draw(t, "records")
		b := EncodeJSONRecords(recs)
		got, err := DecodeJSONRecords(b, lim)
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		want := make([]SeqRecord, len(recs))
		for i, r := range recs {
			want[i] = r
			want[i].Headers = asJSONHeaders(r.Headers)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", b, got, want)
		}
		if again := EncodeJSONRecords(got); string(again) != string(b) {
			t.Fatalf("re-encoding changed the JSON:\n got %s\nwant %s", again, b)
		}
	})
}

// TestAppendJSONRecordsIsTheEncoding: appending a page after other bytes
// gives those bytes and then EncodeJSONRecords' encoding of the same
// records at consecutive seqs.
func TestAppendJSONRecordsIsTheEncoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		drawn := rapid.SliceOfN(seqRecordGen(), 0, 20).Draw(t, "records")
		from := rapid.Uint64Range(0, 1<<40).Draw(t, "from")
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "prefix")
		recs, seqd := make([]domain.Record, len(drawn)), make([]SeqRecord, len(drawn))
		for i, r := range drawn {
			recs[i], seqd[i] = r.Record, SeqRecord{Seq: from + uint64(i), Record: r.Record}
		}
		got := AppendJSONRecords(slices.Clone(prefix), from, recs)
		if want := append(slices.Clone(prefix), EncodeJSONRecords(seqd)...); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONRecords:\n got %q\nwant %q", got, want)
		}
	})
}
