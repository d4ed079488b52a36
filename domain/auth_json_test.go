package domain

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// normScope makes equal scopes DeepEqual: an empty matcher set is nil,
// and the expiry instant of a scope that never expires is 0 (neither is
// kept by the JSON form, and neither changes what the scope allows).
func normScope(s Scope) Scope {
	if len(s.Streams) == 0 {
		s.Streams = nil
	}
	if len(s.Tokens) == 0 {
		s.Tokens = nil
	}
	if !s.Expires {
		s.ExpiresAtMs = 0
	}
	return s
}

// genJSONScope is a valid scope whose values stress the JSON form:
// characters it escapes, non-ASCII, expiries across the int64 range.
func genJSONScope() *rapid.Generator[Scope] {
	value := rapid.StringOfN(rapid.SampledFrom([]rune("ab/<>&\"\\\u2028é\x00\x7f😀")), 0, 6, -1)
	return rapid.Custom(func(t *rapid.T) Scope {
		s := genScope().Draw(t, "scope")
		for _, ms := range []Matchers{s.Streams, s.Tokens} {
			for i := range ms {
				if !s.AutoPrefixStreams && rapid.Bool().Draw(t, "odd value") {
					ms[i].Value = value.Draw(t, "value")
					if ms[i].Value == "" {
						ms[i].Prefix = true
					}
				}
			}
		}
		if s.Expires {
			s.ExpiresAtMs = rapid.OneOf(rapid.Int64(), rapid.Just(int64(-1)), rapid.Just(int64(1<<63-1))).Draw(t, "expiry")
		}
		if rapid.Bool().Draw(t, "empty, not nil") {
			s.Streams = append(Matchers{}, s.Streams...)
		}
		return s
	})
}

func TestScopeJSONRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genJSONScope().Draw(t, "scope")
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseScope(b)
		if err != nil {
			t.Fatalf("ParseScope(%s): %v", b, err)
		}
		if !reflect.DeepEqual(normScope(got), normScope(s)) {
			t.Fatalf("round trip of %+v\n via %s\n gives %+v", s, b, got)
		}
		again, err := got.MarshalJSON()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-marshalled %s, %v; want %s", again, err, b)
		}
		var viaStd Scope
		if err := json.Unmarshal(b, &viaStd); err != nil || !reflect.DeepEqual(viaStd, got) {
			t.Fatalf("json.Unmarshal = %+v, %v; want %+v", viaStd, err, got)
		}
	})
}

// TestScopeJSONForm pins the marshalled form: every key present, groups
// as read/write pairs, operations and audiences by name in order.
func TestScopeJSONForm(t *testing.T) {
	s := Scope{Streams: Matchers{{Value: "/t/", Prefix: true}}, Tokens: Matchers{{Value: "tok"}},
		Groups: 1<<GroupStreamWrite | 1<<GroupAdminRead, Ops: 1<<OpUpdateNodeSlots | 1<<OpRead,
		Audiences: 1<<AudienceAdmin | 1<<AudiencePico, AutoPrefixStreams: true, Expires: true, ExpiresAtMs: 1790000000000}
	want := `{"streams":[{"prefix":"/t/"}],"tokens":[{"exact":"tok"}],` +
		`"groups":{"stream":{"read":false,"write":true},"tokens":{"read":false,"write":false},"admin":{"read":true,"write":false}},` +
		`"ops":["read","update_node_slots"],"audiences":["pico","admin"],"autoPrefixStreams":true,"expiresAtMs":1790000000000}`
	b, err := s.MarshalJSON()
	if err != nil || string(b) != want {
		t.Fatalf("MarshalJSON = %s, %v\nwant %s", b, err, want)
	}
	empty := `{"streams":[],"tokens":[],"groups":{"stream":{"read":false,"write":false},"tokens":{"read":false,"write":false},` +
		`"admin":{"read":false,"write":false}},"ops":[],"audiences":[],"autoPrefixStreams":false,"expiresAtMs":null}`
	if b, err := (Scope{}).MarshalJSON(); err != nil || string(b) != empty {
		t.Fatalf("empty scope marshals to %s, %v\nwant %s", b, err, empty)
	}
	if s, err := ParseScope([]byte(empty)); err != nil || !reflect.DeepEqual(s, Scope{}) {
		t.Fatalf("the empty form parses to %+v, %v", s, err)
	}
}

// TestScopeJSONDocExample is the original documentation's example: an
// appender to /logs/ at the pico listener until its expiry.
func TestScopeJSONDocExample(t *testing.T) {
	const doc = `{"streams":[{"prefix":"/logs/"}],"groups":{"stream":{"read":false,"write":true}},"audiences":["pico"],"expiresAtMs":1790000000000}`
	s, err := ParseScope([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := Scope{Streams: Matchers{{Value: "/logs/", Prefix: true}}, Groups: 1 << GroupStreamWrite,
		Audiences: 1 << AudiencePico, Expires: true, ExpiresAtMs: 1790000000000}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("parsed %+v, want %+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the example is invalid: %v", err)
	}
	const before, at = 1789999999999, 1790000000000
	for _, tc := range []struct {
		op   Op
		aud  Audience
		name string
		now  int64
		want Denial
	}{
		{OpAppend, AudiencePico, "/logs/x", before, DenyNone},
		{OpCreate, AudiencePico, "/logs/x", before, DenyNone},
		{OpDelete, AudiencePico, "/logs/a/b", before, DenyNone},
		{OpRead, AudiencePico, "/logs/x", before, DenyOp},
		{OpHead, AudiencePico, "/logs/x", before, DenyOp},
		{OpAppend, AudienceAdmin, "/logs/x", before, DenyAudience},
		{OpAppend, AudienceDurableStreams, "/logs/x", before, DenyAudience},
		{OpAppend, AudiencePico, "/logs/x", at, DenyExpired},
		{OpAppend, AudiencePico, "/logs/x", at + 1, DenyExpired},
		{OpAppend, AudiencePico, "/logs", before, DenyResource},
		{OpAppend, AudiencePico, "/other/x", before, DenyResource},
		{OpIssueToken, AudiencePico, "t", before, DenyOp},
	} {
		if got := s.Check(tc.op, tc.aud, tc.name, tc.now); got != tc.want {
			t.Errorf("Check(%s, %s, %q, %d) = %q, want %q", tc.op, tc.aud, tc.name, tc.now, got, tc.want)
		}
	}
}

// TestScopeJSONExamples parses each documented shape to the scope it means.
func TestScopeJSONExamples(t *testing.T) {
	for _, tc := range []struct {
		json string
		want Scope
	}{
		{`{}`, Scope{}},
		{` {"ops":["read","trim"]} `, Scope{Ops: 1<<OpRead | 1<<OpTrim}},
		{`{"ops":["read","read"]}`, Scope{Ops: 1 << OpRead}},
		{`{"audiences":["durable_streams","admin","pico"]}`, Scope{Audiences: 7}},
		{`{"tokens":[{"exact":"ci"},{"prefix":""}]}`, Scope{Tokens: Matchers{{Value: "ci"}, {Prefix: true}}}},
		{`{"streams":[]}`, Scope{}},
		{`{"streams":null,"groups":null,"ops":null,"expiresAtMs":null}`, Scope{}},
		{`{"groups":{}}`, Scope{}},
		{`{"groups":{"tokens":{"read":true},"admin":{"write":true}}}`, Scope{Groups: 1<<GroupTokensRead | 1<<GroupAdminWrite}},
		{`{"groups":{"stream":{"read":true,"write":true}}}`, Scope{Groups: 1<<GroupStreamRead | 1<<GroupStreamWrite}},
		{`{"autoPrefixStreams":true,"streams":[{"prefix":"/t/"}]}`, Scope{AutoPrefixStreams: true, Streams: Matchers{{Value: "/t/", Prefix: true}}}},
		{`{"expiresAtMs":0}`, Scope{Expires: true}},
		{`{"expiresAtMs":-9223372036854775808}`, Scope{Expires: true, ExpiresAtMs: -1 << 63}},
		{`{"streams":[{"exact":"/\u00e9\ud83d\ude00"}]}`, Scope{Streams: Matchers{{Value: "/é😀"}}}},
	} {
		got, err := ParseScope([]byte(tc.json))
		if err != nil {
			t.Errorf("ParseScope(%s): %v", tc.json, err)
			continue
		}
		if !reflect.DeepEqual(normScope(got), tc.want) {
			t.Errorf("ParseScope(%s) = %+v, want %+v", tc.json, got, tc.want)
		}
	}
}

// TestScopeJSONRejects: unknown keys at every level, unknown names and
// kinds, malformed matchers, trailing data, oversize input and wrong
// types are all errors, and an error returns no scope.
func TestScopeJSONRejects(t *testing.T) {
	for _, tc := range []struct{ name, json string }{
		{"unknown top key", `{"ops":["read"],"extra":1}`},
		{"unknown top key, null", `{"extra":null}`},
		{"null", `null`},
		{"an array", `[]`},
		{"near key", `{"stream":[]}`},
		{"unknown groups key", `{"groups":{"streams":{"read":true}}}`},
		{"unknown groups entry key", `{"groups":{"stream":{"read":true,"delete":true}}}`},
		{"unknown matcher key", `{"streams":[{"prefix":"/a/","glob":"*"}]}`},
		{"unknown token matcher key", `{"tokens":[{"exact":"a","x":1}]}`},
		{"case-folded top key", `{"Streams":[{"prefix":""}]}`},
		{"case-folded top key, all caps", `{"EXPIRESATMS":1}`},
		{"case-folded groups key", `{"groups":{"Stream":{"read":true}}}`},
		{"case-folded groups entry key", `{"groups":{"stream":{"READ":true}}}`},
		{"case-folded matcher key", `{"streams":[{"Prefix":"/a/"}]}`},
		{"Unicode-folded key", `{"ſtreams":[{"prefix":""}]}`},
		{"case-folded duplicate key", `{"streams":[{"prefix":"/a/"}],"STREAMS":[{"prefix":""}]}`},
		{"unknown op", `{"ops":["read","explode"]}`},
		{"op in capitals", `{"ops":["READ"]}`},
		{"group name as op", `{"ops":["stream"]}`},
		{"unknown audience", `{"audiences":["pico","everyone"]}`},
		{"unknown matcher kind", `{"streams":[{"glob":"/a/*"}]}`},
		{"matcher with both", `{"streams":[{"exact":"/a","prefix":"/a"}]}`},
		{"matcher with neither", `{"streams":[{}]}`},
		{"matcher with null", `{"streams":[{"exact":null}]}`},
		{"matcher not an object", `{"streams":["/a"]}`},
		{"exact not a string", `{"streams":[{"exact":1}]}`},
		{"too many matchers", `{"streams":[` + strings.Repeat(`{"exact":"a"},`, MaxMatchers) + `{"exact":"a"}]}`},
		{"trailing object", `{"ops":["read"]}{}`},
		{"trailing garbage", `{"ops":["read"]} x`},
		{"trailing bracket", `{}]`},
		{"not an object", `[]`},
		{"a string", `"read"`},
		{"empty", ``},
		{"truncated", `{"ops":["read"]`},
		{"expiry a float", `{"expiresAtMs":1.5}`},
		{"expiry exponent", `{"expiresAtMs":1e12}`},
		{"expiry a string", `{"expiresAtMs":"1790000000000"}`},
		{"expiry overflows", `{"expiresAtMs":9223372036854775808}`},
		{"auto a string", `{"autoPrefixStreams":"true"}`},
		{"read a number", `{"groups":{"stream":{"read":1}}}`},
		{"groups an array", `{"groups":[]}`},
		{"ops a string", `{"ops":"read"}`},
		{"oversize", `{"ops":["read"]` + strings.Repeat(" ", MaxScopeJSON+1-len(`{"ops":["read"]}`)) + `}`},
	} {
		s, err := ParseScope([]byte(tc.json))
		if err == nil {
			t.Errorf("%s: ParseScope(%.80s) = %+v, want an error", tc.name, tc.json, s)
		} else if !reflect.DeepEqual(s, Scope{}) {
			t.Errorf("%s: error %v returned %+v", tc.name, err, s)
		}
	}
	// The limit is on the bytes, whitespace included: just under it parses.
	fits := `{"ops":["read"]` + strings.Repeat(" ", MaxScopeJSON-len(`{"ops":["read"]}`)) + `}`
	if _, err := ParseScope([]byte(fits)); err != nil {
		t.Errorf("a scope of exactly MaxScopeJSON bytes: %v", err)
	}
	// A scope nested in another document is read as strictly.
	var doc struct{ Scope Scope }
	if err := json.Unmarshal([]byte(`{"Scope":{"ops":["read"],"extra":1}}`), &doc); err == nil {
		t.Errorf("json.Unmarshal of a nested scope accepted an unknown key: %+v", doc)
	}
}
