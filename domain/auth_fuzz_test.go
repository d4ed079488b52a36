package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseAuthorization: an accepted header holds a credential within
// the limits whose wire token, re-formatted, parses to the same
// credential (in a header too), and formatting is canonical; a refused
// one wraps ErrCredential and returns nothing.
func FuzzParseAuthorization(f *testing.F) {
	for _, seed := range []string{"", "Bearer " + wireToken("ci", secret16), "bearer  " + wireToken("a", secret16+secret16),
		"Bearer " + wireToken(AnonymousTokenID, secret16), "Basic " + b64("user:pass"), "Bearer", "Bearer ",
		"Bearer " + wireToken(strings.Repeat("i", MaxTokenIDLen), strings.Repeat("s", MaxSecretLen)),
		"Bearer " + b64("ci") + "." + b64(secret16) + "=", "Bearer .", "Bearer " + wireToken("a b", secret16),
		"Bearer " + strings.Repeat(" ", MaxAuthorization)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		c, ok, err := ParseAuthorization(header)
		if err != nil {
			if !errors.Is(err, ErrCredential) {
				t.Fatalf("error does not wrap ErrCredential: %v", err)
			}
			if ok || c.ID != "" || c.Secret != nil {
				t.Fatalf("error %v came with %+v, %v", err, c, ok)
			}
			return
		}
		if !ok {
			if header != "" || c.ID != "" || c.Secret != nil {
				t.Fatalf("no credential and no error for %q: %+v", header, c)
			}
			return
		}
		if len(header) > MaxAuthorization || !strings.EqualFold(header[:len("Bearer ")], "Bearer ") {
			t.Fatalf("accepted %q", header)
		}
		if !ValidTokenID(c.ID) || c.ID == AnonymousTokenID || len(c.Secret) < MinSecretLen || len(c.Secret) > MaxSecretLen {
			t.Fatalf("accepted a credential outside the limits: %+v", c)
		}
		wire := FormatToken(c)
		again, err := ParseToken(wire)
		if err != nil || again.ID != c.ID || !bytes.Equal(again.Secret, c.Secret) {
			t.Fatalf("FormatToken(%+v) = %q parses to %+v, %v", c, wire, again, err)
		}
		if FormatToken(again) != wire {
			t.Fatalf("formatting is not stable: %q, %q", wire, FormatToken(again))
		}
		viaHeader, ok, err := ParseAuthorization("Bearer " + wire)
		if err != nil || !ok || !reflect.DeepEqual(viaHeader, again) {
			t.Fatalf("the re-formatted header parses to %+v, %v, %v", viaHeader, ok, err)
		}
		// The header's token and the re-formatted one differ only where
		// base64 decoding is lenient (unused low bits, CR and LF).
		token := strings.TrimLeft(header[len("Bearer "):], " ")
		if len(strings.NewReplacer("\r", "", "\n", "").Replace(token)) != len(wire) {
			t.Fatalf("token %q is not the length of its canonical form %q", token, wire)
		}
	})
}

// FuzzParseScope: an accepted scope holds only known operations, groups
// and audiences, re-marshals to JSON that parses to the same scope and
// marshals to the same bytes, and, when valid, survives the token record
// encoding; a refused one returns the zero scope.
func FuzzParseScope(f *testing.F) {
	for _, seed := range []string{
		`{"streams":[{"prefix":"/logs/"}],"groups":{"stream":{"read":false,"write":true}},"audiences":["pico"],"expiresAtMs":1790000000000}`,
		`{}`, `null`, `[]`, `{"ops":["read","trim"],"audiences":["admin"]}`, `{"tokens":[{"exact":"ci"},{"prefix":""}]}`,
		`{"streams":[{"exact":"/a","prefix":"/a"}]}`, `{"streams":[{}]}`, `{"Streams":[]}`, `{"groups":{"stream":{"READ":true}}}`,
		`{"autoPrefixStreams":true,"streams":[{"prefix":"/t/"}],"expiresAtMs":-1}`, `{"ops":["read"]} {}`,
		`{"streams":[{"exact":"<\u2028\ud800é>"}]}`, `{"expiresAtMs":9223372036854775807}`,
	} {
		f.Add([]byte(seed))
	}
	for _, s := range []Scope{RootScope(), tokenRecordSample().Scope, {Ops: 1 << OpDelete, Audiences: 2}} {
		b, err := s.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseScope(b)
		if err != nil {
			if !reflect.DeepEqual(s, Scope{}) {
				t.Fatalf("error %v came with %+v", err, s)
			}
			return
		}
		if len(b) > MaxScopeJSON || !json.Valid(b) {
			t.Fatalf("accepted %d bytes of %q", len(b), b)
		}
		if s.Groups >= 1<<numGroups || s.Ops >= 1<<numOps || s.Audiences >= 1<<numAudiences || !s.Expires && s.ExpiresAtMs != 0 {
			t.Fatalf("parsed unknown bits or a stray expiry: %+v", s)
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		var again Scope
		if len(out) <= MaxScopeJSON {
			again, err = ParseScope(out)
		} else {
			// Escaping can grow the form past the bound ParseScope puts
			// on input; the form itself must still read back.
			var w scopeJSON
			if err = decodeStrict(out, &w); err == nil {
				again, err = w.scope()
			}
		}
		if err != nil {
			t.Fatalf("re-marshalled scope %s does not parse: %v", out, err)
		}
		if !reflect.DeepEqual(normScope(again), normScope(s)) {
			t.Fatalf("%q parses to %+v\nbut its re-marshalled form %s to %+v", b, s, out, again)
		}
		if out2, err := again.MarshalJSON(); err != nil || !bytes.Equal(out2, out) {
			t.Fatalf("marshalling is not stable:\n%s\n%s", out, out2)
		}
		if (s.Validate() == nil) != (again.Validate() == nil) {
			t.Fatalf("validity changed in the round trip: %v, %v", s.Validate(), again.Validate())
		}
		if s.Validate() != nil {
			return
		}
		r := TokenRecord{Verifier: VerifierOf(b), Scope: s, Issuer: "fuzz", CreatedAtMs: 1}
		got, err := DecodeTokenRecord(EncodeTokenRecord(r))
		if err != nil {
			t.Fatalf("a valid scope's record does not decode: %v", err)
		}
		if !reflect.DeepEqual(normScope(got.Scope), normScope(s)) {
			t.Fatalf("the record's scope %+v comes back as %+v", s, got.Scope)
		}
	})
}
