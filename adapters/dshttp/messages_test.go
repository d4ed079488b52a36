package dshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
)

func TestJSONMessages(t *testing.T) {
	for body, want := range map[string][]string{
		`{"event": "created"}`:                {`{"event":"created"}`},
		"[ {\"a\" : 1} ,\n {\"b\": [1, 2]} ]": {`{"a":1}`, `{"b":[1,2]}`},
		`[[1,2], [3,4]]`:                      {`[1,2]`, `[3,4]`},
		`[[[1,2,3]]]`:                         {`[[1,2,3]]`},
		`["a b", "\n", "\u00e9"]`:             {`"a b"`, `"\n"`, `"\u00e9"`},
		` 12345678901234567890 `:              {`12345678901234567890`},
		`[]`:                                  nil,
	} {
		records, err := jsonMessages([]byte(body), true)
		if err != nil {
			t.Errorf("%q: %v", body, err)
			continue
		}
		var got []string
		for _, r := range records {
			got = append(got, string(r.Body))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
	for _, body := range []string{"", " ", "{", "[1,]", "[1 2]", "{} {}", "nul", "'a'", "\xff"} {
		if _, err := jsonMessages([]byte(body), true); err == nil {
			t.Errorf("%q accepted", body)
		}
	}
	if _, err := jsonMessages([]byte("[]"), false); err == nil {
		t.Error("[] accepted for an append")
	}
}

// TestJSONMessagesDoNotAlias: records are separate slices, so appending
// to one cannot overwrite the next.
func TestJSONMessagesDoNotAlias(t *testing.T) {
	records, _ := jsonMessages([]byte(`[1,2]`), false)
	_ = append(records[0].Body, 'x')
	if string(records[1].Body) != "2" {
		t.Errorf("second record %q", records[1].Body)
	}
}

func TestJSONMessagesLimit(t *testing.T) {
	body := "[" + strings.Repeat("1,", maxJSONMessages) + "1]"
	_, err := jsonMessages([]byte(body), false)
	var he *httpError
	if !errors.As(err, &he) || he.status != http.StatusRequestEntityTooLarge {
		t.Errorf("%d messages: %v", maxJSONMessages+1, err)
	}
	records, err := jsonMessages([]byte(body[:len(body)-3]+"]"), false)
	if err != nil || len(records) != maxJSONMessages {
		t.Errorf("%d messages: %d, %v", maxJSONMessages, len(records), err)
	}
}

func TestPageBody(t *testing.T) {
	records, _ := jsonMessages([]byte(`[1,{"a":2}]`), false)
	if got := string(pageBody("application/json", records)); got != `[1,{"a":2}]` {
		t.Errorf("JSON page %s", got)
	}
	if got := string(pageBody("application/json", nil)); got != `[]` {
		t.Errorf("empty JSON page %s", got)
	}
	if got := string(pageBody("text/plain", records)); got != `1{"a":2}` {
		t.Errorf("text page %s", got)
	}
}

// FuzzJSONMessages: a body is split exactly when it is one JSON value in
// UTF-8, and then every message is one too, compacted, so the stream
// service takes them (ports.Unfit); put
// back together, the messages are the compacted body.
func FuzzJSONMessages(f *testing.F) {
	for _, seed := range []string{`{"a": 1}`, "[1, [2, 3], {\"b\": \"\\u00e9\"}]", "[]", "[1,]", "\xff", `"\ud800"`, " [ ] ", `["\ud83d\ude00", "\\ud800", "\ud83d\u0041"]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		records, err := jsonMessages(body, true)
		if valid := domain.ValidJSON(body); valid != (err == nil) {
			t.Fatalf("%q: valid %v, error %v", body, valid, err)
		}
		if err != nil {
			return
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, body)
		parts := make([][]byte, len(records))
		for i, r := range records {
			var again bytes.Buffer
			if !domain.ValidJSON(r.Body) || json.Compact(&again, r.Body) != nil || !bytes.Equal(again.Bytes(), r.Body) {
				t.Fatalf("%q: message %d %q is not one compacted JSON value", body, i, r.Body)
			}
			parts[i] = r.Body
		}
		whole := compact.Bytes()
		if whole[0] == '[' {
			whole = whole[1 : len(whole)-1]
		}
		if joined := bytes.Join(parts, []byte(",")); !bytes.Equal(joined, whole) {
			t.Fatalf("%q: messages %q, compacted body %q", body, joined, compact.Bytes())
		}
	})
}
