package conformance

import (
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// personSchema takes objects with a string name and an optional age of 0
// or more.
const personSchema = `{"type":"object","required":["name"],"properties":{
	"name":{"type":"string"},"age":{"type":"integer","minimum":0}}}`

// SchemaCompiler runs the schema compiler suite: what compiles, what a
// validator takes, and how a refusal names its place.
func SchemaCompiler(t *testing.T, c ports.SchemaCompiler) {
	t.Run("Validates", func(t *testing.T) { testSchemaValidates(t, c) })
	t.Run("RefusesBadSchemas", func(t *testing.T) { testSchemaRefusesBad(t, c) })
	t.Run("FetchesNothing", func(t *testing.T) { testSchemaFetchesNothing(t, c) })
}

func compile(t *testing.T, c ports.SchemaCompiler, body string) ports.RecordValidator {
	t.Helper()
	v, err := c.Compile(domain.Schema{Format: domain.SchemaFormatJSON, Body: []byte(body)})
	if err != nil {
		t.Fatalf("Compile(%s): %v", body, err)
	}
	return v
}

func testSchemaValidates(t *testing.T, c ports.SchemaCompiler) {
	v := compile(t, c, personSchema)
	for _, ok := range []string{`{"name":"ada"}`, `{"name":"ada","age":36}`, ` {"name":"x","extra":[1]} `} {
		if err := v.Validate([]byte(ok)); err != nil {
			t.Errorf("Validate(%s): %v", ok, err)
		}
	}
	for body, want := range map[string][]string{
		`{"age":3}`:                 {"at /", "name"},
		`{"name":"ada","age":-1}`:   {"at /age", "minimum"},
		`{"name":7}`:                {"at /name", "string"},
		`[1,2]`:                     {"at /", "object"},
		`{"name":`:                  {"not JSON"},
		"{\"name\":\"\xff\"}":       {"not JSON"},
		``:                          {"not JSON"},
		`{"name":"a"} {"name":"b"}`: {"not JSON"},
	} {
		err := v.Validate([]byte(body))
		if err == nil {
			t.Errorf("Validate(%q) passed", body)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%q) = %q, want it to mention %q", body, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") || len(err.Error()) > 400 {
			t.Errorf("Validate(%q): message of %d bytes over lines: %q", body, len(err.Error()), err)
		}
	}
	if err := compile(t, c, `true`).Validate([]byte(`"anything"`)); err != nil {
		t.Errorf("the schema true refused a string: %v", err)
	}
	if err := compile(t, c, `false`).Validate([]byte(`{}`)); err == nil {
		t.Error("the schema false took an object")
	}
}

func testSchemaRefusesBad(t *testing.T, c ports.SchemaCompiler) {
	for _, s := range []domain.Schema{
		{Format: domain.SchemaFormatJSON, Body: []byte(`{"type":`)},
		{Format: domain.SchemaFormatJSON, Body: []byte(`{"type":"no-such-type"}`)},
		{Format: domain.SchemaFormatJSON, Body: []byte(`{"minimum":"three"}`)},
		{Format: domain.SchemaFormatJSON, Body: nil},
		{Format: "avro", Body: []byte(`{"type":"record"}`)},
	} {
		if v, err := c.Compile(s); err == nil {
			t.Errorf("Compile(%s %q) = %v, want an error", s.Format, s.Body, v)
		}
	}
}

func testSchemaFetchesNothing(t *testing.T, c ports.SchemaCompiler) {
	for _, ref := range []string{"http://127.0.0.1:1/s.json", "file:///etc/passwd", "https://json-schema.org/x"} {
		body := `{"$ref":"` + ref + `"}`
		if _, err := c.Compile(domain.Schema{Format: domain.SchemaFormatJSON, Body: []byte(body)}); err == nil {
			t.Errorf("a schema referring to %s compiled", ref)
		}
	}
	v := compile(t, c, `{"$defs":{"p":`+personSchema+`},"$ref":"#/$defs/p"}`)
	if err := v.Validate([]byte(`{"name":"ada"}`)); err != nil {
		t.Errorf("a reference within the document: %v", err)
	}
}
