package domain

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// tokenRecordGolden is under the wire subfolder: the files directly in
// testdata/golden are command encodings, one per command type.
var tokenRecordGolden = filepath.Join("testdata", "golden", "wire", "token_record.hex")

// tokenRecordSample has every field non-zero: every matcher is a prefix
// because a false Prefix is a zero field (TestTokenRecordLayout covers an
// exact matcher).
func tokenRecordSample() TokenRecord {
	return TokenRecord{
		Verifier: VerifierOf([]byte("golden secret, 32 bytes long....")),
		Scope: Scope{
			Streams:           Matchers{{Value: "/tenant-é/", Prefix: true}},
			Tokens:            Matchers{{Value: "tenant-", Prefix: true}, {Value: "ci-", Prefix: true}},
			Groups:            1<<GroupStreamRead | 1<<GroupStreamWrite | 1<<GroupTokensRead,
			Ops:               1<<OpIssueToken | 1<<OpUpdateNodeSlots,
			Audiences:         1<<AudiencePico | 1<<AudienceDurableStreams,
			AutoPrefixStreams: true,
			ExpiresAtMs:       1_790_000_000_000,
			Expires:           true,
		},
		Issuer:      "bootstrap-admin",
		CreatedAtMs: 1_700_000_000_123,
	}
}

func TestTokenRecordGolden(t *testing.T) {
	sample := tokenRecordSample()
	if p := nonZero(reflect.ValueOf(sample), "TokenRecord"); p != "" {
		t.Fatalf("sample field %s is zero", p)
	}
	writeGoldenOnUpdate(t, tokenRecordGolden, EncodeTokenRecord(sample))
	want := readGolden(t, tokenRecordGolden)
	if got := EncodeTokenRecord(sample); !bytes.Equal(got, want) {
		t.Errorf("EncodeTokenRecord changed the bytes:\n got %x\nwant %x", got, want)
	}
	r, err := DecodeTokenRecord(want)
	if err != nil {
		t.Fatalf("decode golden: %v", err)
	}
	if !reflect.DeepEqual(r, sample) {
		t.Fatalf("golden decodes to %+v, want %+v", r, sample)
	}
}

// TestTokenRecordLayout pins the field order and encodings by hand.
func TestTokenRecordLayout(t *testing.T) {
	var v Verifier
	for i := range v {
		v[i] = byte(i)
	}
	r := TokenRecord{Verifier: v, Issuer: "ab", CreatedAtMs: -2, Scope: Scope{
		Streams: Matchers{{Value: "/x"}, {Value: "", Prefix: true}}, Groups: 0x21, Ops: 1 << OpUpdateNodeSlots,
		Audiences: 4, Expires: true, ExpiresAtMs: 64}}
	var want []byte
	want = append(want, 1, 32)                   // version, verifier length
	want = append(want, v[:]...)                 //
	want = append(want, 2, 'a', 'b')             // issuer
	want = append(want, 3)                       // created -2, zigzag
	want = append(want, 2, 0, 2, '/', 'x', 1, 0) // streams: exact "/x", prefix ""
	want = append(want, 0)                       // no token matchers
	want = append(want, 0x21, 0x80, 0x80, 0x02)  // groups, ops 1<<15 as a uvarint
	want = append(want, 4, 0, 1, 0x80, 0x01)     // audiences, auto, expires, expiry 64 zigzag
	got := EncodeTokenRecord(r)
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeTokenRecord =\n %x\nwant\n %x", got, want)
	}
	back, err := DecodeTokenRecord(got)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, r)
	}
}

// genTokenRecord draws a record with a valid scope.
func genTokenRecord() *rapid.Generator[TokenRecord] {
	return rapid.Custom(func(t *rapid.T) TokenRecord {
		var r TokenRecord
		copy(r.Verifier[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "verifier"))
		r.Issuer = rapid.String().Draw(t, "issuer")
		r.CreatedAtMs = rapid.Int64().Draw(t, "created")
		r.Scope = genJSONScope().Draw(t, "scope")
		if !r.Scope.Expires {
			r.Scope.ExpiresAtMs = rapid.Int64().Draw(t, "unused expiry")
		}
		return r
	})
}

// TestTokenRecordRoundTrip: a record decodes to itself, the unused expiry
// of a scope that never expires included; only an empty matcher set comes
// back nil.
func TestTokenRecordRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genTokenRecord().Draw(t, "record")
		b := EncodeTokenRecord(r)
		got, err := DecodeTokenRecord(b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		want := r
		want.Scope.Streams, want.Scope.Tokens = normScope(r.Scope).Streams, normScope(r.Scope).Tokens
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %+v\ngives %+v", r, got)
		}
		if again := EncodeTokenRecord(got); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding changed the bytes")
		}
		// The record owns its memory: scribbling on the input changes nothing.
		for i := range b {
			b[i] ^= 0xff
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatal("the decoded record aliases its input")
		}
	})
}

func TestDecodeTokenRecordRejects(t *testing.T) {
	golden := EncodeTokenRecord(tokenRecordSample())
	check := func(name string, b []byte) {
		t.Helper()
		r, err := DecodeTokenRecord(b)
		if err == nil {
			t.Errorf("%s: decoded %x to %+v", name, b, r)
			return
		}
		if !errors.Is(err, ErrDecode) {
			t.Errorf("%s: error does not wrap ErrDecode: %v", name, err)
		}
		if !reflect.DeepEqual(r, TokenRecord{}) {
			t.Errorf("%s: error %v returned %+v", name, err, r)
		}
	}
	for n := range len(golden) {
		check("truncated", golden[:n])
	}
	check("trailing byte", append(bytes.Clone(golden), 0))
	for _, v := range []byte{0, 2, 0xff} {
		b := bytes.Clone(golden)
		b[0] = v
		check("version", b)
	}
	// A record with the layout of TestTokenRecordLayout, fields swapped in.
	build := func(verifier []byte, tail ...byte) []byte {
		b := append([]byte{1, byte(len(verifier))}, verifier...)
		b = append(b, 0, 0) // no issuer, created 0
		return append(b, tail...)
	}
	valid := []byte{0, 0, 1, 0, 1, 0, 0, 0} // no matchers, groups 1, ops 0, audience 1, not auto, never expires
	if _, err := DecodeTokenRecord(build(make([]byte, 32), valid...)); err != nil {
		t.Fatalf("the base record is refused: %v", err)
	}
	check("short verifier", build(make([]byte, 31), valid...))
	check("long verifier", build(make([]byte, 33), valid...))
	check("no verifier", build(nil, valid...))
	z := make([]byte, 32)
	check("bool 2", build(z, 0, 0, 1, 0, 1, 2, 0, 0))
	check("expires bool 2", build(z, 0, 0, 1, 0, 1, 0, 2, 0))
	check("matcher prefix bool 2", build(z, 1, 2, 1, 'x', 0, 1, 0, 1, 0, 0, 0))
	check("ops over 32 bits", build(z, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 0, 0, 0))
	check("huge matcher count", build(z, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1, 0, 1, 0, 0, 0))
	check("matcher length past the end", build(z, 1, 0, 0x7f, 'x'))
	check("overlong varint", build(z, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 0, 0, 0))
	// A scope Validate refuses is refused, whatever its encoding.
	for _, tc := range []struct {
		name string
		edit func(*Scope)
	}{
		{"no operation", func(s *Scope) { s.Groups, s.Ops = 0, 0 }},
		{"no audience", func(s *Scope) { s.Audiences = 0 }},
		{"unknown op", func(s *Scope) { s.Ops |= 1 << numOps }},
		{"unknown group", func(s *Scope) { s.Groups |= 1 << numGroups }},
		{"unknown audience", func(s *Scope) { s.Audiences |= 1 << numAudiences }},
		{"auto with two prefixes", func(s *Scope) { s.Streams = append(s.Streams, Matcher{Value: "/b/", Prefix: true}) }},
		{"empty exact", func(s *Scope) { s.Tokens = append(s.Tokens, Matcher{}) }},
		{"matcher too long", func(s *Scope) { s.Tokens[0].Value = strings.Repeat("x", MaxMatcherLen+1) }},
	} {
		r := tokenRecordSample()
		tc.edit(&r.Scope)
		check(tc.name, EncodeTokenRecord(r))
	}
}

func TestVerifierOf(t *testing.T) {
	// SHA-256 of "abc", FIPS 180-2.
	want, _ := hex.DecodeString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
	if got := VerifierOf([]byte("abc")); !bytes.Equal(got[:], want) {
		t.Fatalf("VerifierOf(abc) = %x", got)
	}
	if VerifierOf([]byte("a")) == VerifierOf([]byte("b")) {
		t.Fatal("two secrets share a verifier")
	}
}

// b64 is the wire encoding of one part.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// wireToken is the wire form of id and secret, built independently of
// FormatToken.
func wireToken(id, secret string) string { return b64(id) + "." + b64(secret) }

const secret16 = "0123456789abcdef"

func TestParseAuthorization(t *testing.T) {
	tok := wireToken("ci", secret16)
	for _, tc := range []struct {
		name, header string
		ok           bool // a credential; otherwise an error
	}{
		{"Bearer", "Bearer " + tok, true},
		{"lower case", "bearer " + tok, true},
		{"upper case", "BEARER " + tok, true},
		{"mixed case", "bEaReR " + tok, true},
		{"spaces before the token", "Bearer    " + tok, true},
		{"no scheme", tok, false},
		{"scheme only", "Bearer", false},
		{"scheme and space", "Bearer ", false},
		{"scheme and spaces", "Bearer   ", false},
		{"Basic", "Basic " + tok, false},
		{"Bearer prefix", "Bearerx " + tok, false},
		{"leading space", " Bearer " + tok, false},
		{"tab", "Bearer\t" + tok, false},
		{"trailing space", "Bearer " + tok + " ", false},
		{"two tokens", "Bearer " + tok + " " + tok, false},
		{"anonymous", "Bearer " + wireToken(AnonymousTokenID, secret16), false},
		{"bad token", "Bearer x.y", false},
	} {
		c, ok, err := ParseAuthorization(tc.header)
		switch {
		case tc.ok && (err != nil || !ok || c.ID != "ci" || string(c.Secret) != secret16):
			t.Errorf("%s: ParseAuthorization(%q) = %+v, %v, %v", tc.name, tc.header, c, ok, err)
		case !tc.ok && (err == nil || ok || !errors.Is(err, ErrCredential) || c.ID != "" || c.Secret != nil):
			t.Errorf("%s: ParseAuthorization(%q) = %+v, %v, %v; want an ErrCredential", tc.name, tc.header, c, ok, err)
		}
	}
	if c, ok, err := ParseAuthorization(""); ok || err != nil || c.ID != "" || c.Secret != nil {
		t.Errorf("an empty header is %+v, %v, %v; want no credential and no error", c, ok, err)
	}
	// The header bound counts every byte, the spaces too.
	pad := MaxAuthorization - len("Bearer "+tok)
	longest := "Bearer " + strings.Repeat(" ", pad) + tok
	if _, ok, err := ParseAuthorization(longest); !ok || err != nil {
		t.Errorf("a header of MaxAuthorization bytes: %v", err)
	}
	if _, ok, err := ParseAuthorization(longest[:6] + " " + longest[6:]); ok || !errors.Is(err, ErrCredential) ||
		!strings.Contains(err.Error(), "over") {
		t.Errorf("a header of MaxAuthorization+1 bytes: %v, %v", ok, err)
	}
	// The longest wire token fits in the header.
	most := "Bearer " + wireToken(strings.Repeat("i", MaxTokenIDLen), strings.Repeat("s", MaxSecretLen))
	if len(most) > MaxAuthorization {
		t.Fatalf("the longest token needs a %d-byte header", len(most))
	}
	if _, ok, err := ParseAuthorization(most); !ok || err != nil {
		t.Errorf("the longest token: %v", err)
	}
}

func TestParseToken(t *testing.T) {
	longID := strings.Repeat("i", MaxTokenIDLen)
	for _, tc := range []struct {
		name, wire string
		id, secret string // want; "" for an error
	}{
		{"plain", wireToken("ci", secret16), "ci", secret16},
		{"printable id", wireToken("a~!-_.:/\"\\", secret16), "a~!-_.:/\"\\", secret16},
		{"longest id", wireToken(longID, secret16), longID, secret16},
		{"id too long", wireToken(longID+"i", secret16), "", ""},
		{"empty id", wireToken("", secret16), "", ""},
		{"id with a space", wireToken("a b", secret16), "", ""},
		{"id with a control", wireToken("a\x00", secret16), "", ""},
		{"id with DEL", wireToken("a\x7f", secret16), "", ""},
		{"id not ASCII", wireToken("é", secret16), "", ""},
		{"anonymous", wireToken(AnonymousTokenID, secret16), "", ""},
		{"Anonymous is another id", wireToken("Anonymous", secret16), "Anonymous", secret16},
		{"shortest secret", wireToken("ci", secret16), "ci", secret16},
		{"secret too short", wireToken("ci", secret16[1:]), "", ""},
		{"longest secret", wireToken("ci", strings.Repeat("s", MaxSecretLen)), "ci", strings.Repeat("s", MaxSecretLen)},
		{"secret too long", wireToken("ci", strings.Repeat("s", MaxSecretLen+1)), "", ""},
		{"binary secret", wireToken("ci", "\x00\xff\xfe\xfd"+secret16), "ci", "\x00\xff\xfe\xfd" + secret16},
		{"no dot", b64("ci") + b64(secret16), "", ""},
		{"empty", "", "", ""},
		{"dot only", ".", "", ""},
		{"two dots", wireToken("ci", secret16) + ".", "", ""},
		{"non-canonical last character", b64("ci") + "." + b64(secret16)[:21] + "h", "", ""},
		{"line break in a part", b64("ci") + "." + b64(secret16)[:10] + "\n" + b64(secret16)[10:], "", ""},
		{"padded id", base64.URLEncoding.EncodeToString([]byte("c")) + "." + b64(secret16), "", ""},
		{"padded secret", b64("ci") + "." + base64.URLEncoding.EncodeToString([]byte(secret16)), "", ""},
		{"standard alphabet", b64("ci") + "." + base64.RawStdEncoding.EncodeToString([]byte("\xfb\xff"+secret16)), "", ""},
		{"bad base64 length", b64("ci") + "." + b64(secret16) + "AAA", "", ""},
		{"bad base64 byte", b64("ci") + ".*" + b64(secret16)[1:], "", ""},
		{"space inside", b64("ci") + ". " + b64(secret16), "", ""},
	} {
		c, err := ParseToken(tc.wire)
		if tc.id == "" {
			if err == nil || !errors.Is(err, ErrCredential) || c.ID != "" || c.Secret != nil {
				t.Errorf("%s: ParseToken(%q) = %+v, %v; want an ErrCredential", tc.name, tc.wire, c, err)
			}
			continue
		}
		if err != nil || c.ID != tc.id || string(c.Secret) != tc.secret {
			t.Errorf("%s: ParseToken(%q) = %+v, %v", tc.name, tc.wire, c, err)
		}
	}
	if !ValidTokenID(AnonymousTokenID) {
		t.Error("the anonymous id is not a valid id: its record could not be stored under it")
	}
}

// printable is every byte a token id may hold.
var printable = func() []rune {
	var rs []rune
	for r := '!'; r <= '~'; r++ {
		rs = append(rs, r)
	}
	return rs
}()

// TestFormatTokenRoundTrip: every credential within the limits formats to
// a wire token that parses back to it, is base64url without padding, and
// is the same wire token as built independently.
func TestFormatTokenRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.StringOfN(rapid.RuneFrom(printable), 1, MaxTokenIDLen, -1).
			Filter(func(s string) bool { return s != AnonymousTokenID }).Draw(t, "id")
		secret := rapid.SliceOfN(rapid.Byte(), MinSecretLen, MaxSecretLen).Draw(t, "secret")
		wire := FormatToken(Credential{ID: id, Secret: secret})
		if want := wireToken(id, string(secret)); wire != want {
			t.Fatalf("FormatToken = %q, want %q", wire, want)
		}
		if strings.ContainsAny(wire, "=+/ ") {
			t.Fatalf("wire token %q leaves base64url", wire)
		}
		c, err := ParseToken(wire)
		if err != nil || c.ID != id || !bytes.Equal(c.Secret, secret) {
			t.Fatalf("ParseToken(%q) = %+v, %v", wire, c, err)
		}
		h, ok, err := ParseAuthorization("Bearer " + wire)
		if err != nil || !ok || !reflect.DeepEqual(h, c) {
			t.Fatalf("ParseAuthorization = %+v, %v, %v", h, ok, err)
		}
	})
}
