package picohttp

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/picomq/pico/domain"
)

// FuzzPatchedBinding feeds PATCH bodies to the binding decoder: it
// answers a binding or a 400, and what it answers follows the body.
func FuzzPatchedBinding(f *testing.F) {
	for _, s := range []string{`{}`, `{"schema":null}`, `{"schema":"p","schemaValidate":true}`, `{"schemaValidate":false}`,
		`{"x":1}`, `[]`, `null`, `{"schema":1}`, `{} {}`, `{"schema":"a","schema":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := httptest.NewRequest("PATCH", "/_streams/s", bytes.NewReader(b))
		was := domain.StreamConfig{Schema: "was", SchemaValidate: true}
		schema, validate, err := patchedBinding(r, was)
		if err != nil {
			var pe *protocolError
			if !errors.As(err, &pe) || pe.status != 400 {
				t.Fatalf("%q: %v is not a 400", b, err)
			}
			return
		}
		if schema == "" && validate && !bytes.Contains(b, []byte("schema")) {
			t.Fatalf("%q: validation without a schema", b)
		}
	})
}
