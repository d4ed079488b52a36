package domain

import (
	"bytes"
	"errors"
	"testing"
)

func TestCheckSchemaName(t *testing.T) {
	for _, ok := range []string{"orders", "orders.v2", "a_b-C9", "x.json"} {
		if err := CheckSchemaName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".hidden", "a/b", "a b", "é", string(bytes.Repeat([]byte("a"), MaxSchemaName+1))} {
		if err := CheckSchemaName(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", bad, err)
		}
	}
}

func TestSchemaFormatOf(t *testing.T) {
	for _, tc := range []struct {
		contentType, name, want string
		ok                      bool
	}{
		{"application/schema+json", "person", SchemaFormatJSON, true},
		{"Application/Schema+JSON; charset=utf-8", "person", SchemaFormatJSON, true},
		{"", "person.json", SchemaFormatJSON, true},
		{"application/octet-stream", "person.json", SchemaFormatJSON, true},
		{"", "person", "", false},
		{"application/avro", "person.json", "", false},
	} {
		if got, ok := SchemaFormatOf(tc.contentType, tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("SchemaFormatOf(%q, %q) = %q, %v; want %q, %v", tc.contentType, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	s := Schema{Format: SchemaFormatJSON, Body: []byte(`{"type":"object"}`)}
	got, err := DecodeSchema(EncodeSchema(s))
	if err != nil || got.Format != s.Format || !bytes.Equal(got.Body, s.Body) {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {2}, {1}, {1, 9, 'a'}} {
		if _, err := DecodeSchema(bad); !errors.Is(err, ErrDecode) {
			t.Errorf("DecodeSchema(%x) = %v, want ErrDecode", bad, err)
		}
	}
}

func FuzzDecodeSchema(f *testing.F) {
	f.Add(EncodeSchema(Schema{Format: SchemaFormatJSON, Body: []byte(`{}`)}))
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSchema(b)
		if err != nil {
			return
		}
		if again := EncodeSchema(s); !bytes.Equal(again, b) {
			again2, err := DecodeSchema(again)
			if err != nil || again2.Format != s.Format || !bytes.Equal(again2.Body, s.Body) {
				t.Fatalf("re-encoding %x gave %x", b, again)
			}
		}
	})
}
