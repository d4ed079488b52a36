package picowire

import (
	"errors"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
)

// TestJSONBatchRefusesUnsoundText checks that a string encoding/json would
// decode with replacements is refused, naming the record and the field.
func TestJSONBatchRefusesUnsoundText(t *testing.T) {
	lim := BatchLimits{MaxRecords: 10, MaxHeaders: 10}
	for in, why := range map[string]string{
		`{"records": [{"body": "ok"}, {"body": "a` + "\xff" + `b"}]}`:           `records[1]: body is not valid UTF-8: byte 0xff at 1; send bytes as body_b64`,
		`{"records": [{"body": "\ud800"}]}`:                                     `records[0]: body holds \ud800 at byte 0, a lone UTF-16 surrogate`,
		`{"records": [{"body": "\"\udc00"}]}`:                                   `records[0]: body holds \udc00 at byte 2`,
		`{"records": [{"body": "x\ud83d\u0041"}]}`:                              `records[0]: body holds \ud83d`,
		`{"records": [{"headers": {"k": "\ud800"}}]}`:                           `records[0]: header "k" holds \ud800`,
		`{"records": [{"headers": {"k": "` + "\xc3" + `"}}]}`:                   `records[0]: header "k" is not valid UTF-8: byte 0xc3 at 0`,
		`{"records": [{"body": "a"}, {"headers": {"a": "b", "\udfff": "v"}}]}`:  `records[1]: header name "\\udfff" holds \udfff`,
		`{"records": [{"headers": {"` + "k\xff" + `": "v"}}]}`:                  `records[0]: header name "k\xff" is not valid UTF-8: byte 0xff at 1`,
		`{"records": [{"body_b64": "` + "\xff" + `"}]}`:                         `records[0]: body_b64 is not valid UTF-8`,
		`{"records": [{"body": "\ud83d\ude00", "headers": {"k": "\ud800\\"}}]}`: `records[0]: header "k" holds \ud800`,
	} {
		_, err := DecodeJSONBatch([]byte(in), lim)
		if !errors.Is(err, domain.ErrMalformed) || !strings.Contains(err.Error(), why) {
			t.Errorf("DecodeJSONBatch(%s): %v, want it to say %s", in, err, why)
		}
	}
}

// TestJSONBatchKeepsSoundEscapes checks that pairs and escaped backslashes
// still decode, on the careful path the escapes send them down.
func TestJSONBatchKeepsSoundEscapes(t *testing.T) {
	in := `{"records": [{"body": "\ud83d\ude00 \\ud800", "headers": {"\u00e9": "\uD83D\uDE00"}}]}`
	got, err := DecodeJSONBatch([]byte(in), BatchLimits{MaxRecords: 1, MaxHeaders: 1})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Body) != `😀 \ud800` || got[0].Headers[0] != (domain.Header{Key: "é", Value: "😀"}) {
		t.Fatalf("decoded %+v", got[0])
	}
}

func TestJSONRecordsRefuseUnsoundText(t *testing.T) {
	_, err := DecodeJSONRecords([]byte(`[{"seq": 0, "timestamp": 1, "body": "\ud800"}]`), BatchLimits{MaxRecords: 1, MaxHeaders: 1})
	if !errors.Is(err, domain.ErrMalformed) || !strings.Contains(err.Error(), `page[0]: body holds \ud800`) {
		t.Fatalf("a lone surrogate in a page: %v", err)
	}
}
