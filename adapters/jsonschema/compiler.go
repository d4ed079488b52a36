package jsonschema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	js "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// schemaURL is where a compiled document is taken to live: the name it
// resolves its own references against.
const schemaURL = "pico:///schema.json"

// maxMessage bounds a validation message shown to a client.
const maxMessage = 300

// Compiler is the JSON Schema compiler. Its zero value is ready.
type Compiler struct{}

var _ ports.SchemaCompiler = Compiler{}

// Compile compiles s, which must be of domain.SchemaFormatJSON.
func (Compiler) Compile(s domain.Schema) (ports.RecordValidator, error) {
	if s.Format != domain.SchemaFormatJSON {
		return nil, fmt.Errorf("schema format %q is not one this node validates (it knows %s)", s.Format, domain.SchemaFormatJSON)
	}
	doc, err := js.UnmarshalJSON(bytes.NewReader(s.Body))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %v", err)
	}
	c := js.NewCompiler()
	c.UseLoader(js.SchemeURLLoader{}) // no scheme: nothing is fetched
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("the schema does not load: %v", oneLine(err))
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %v", oneLine(err))
	}
	return validator{compiled}, nil
}

type validator struct{ s *js.Schema }

func (v validator) Validate(body []byte) error {
	if !domain.ValidJSON(body) {
		return errors.New("the body is not JSON: it must be one JSON value in UTF-8")
	}
	inst, err := js.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the body is not JSON: %v", oneLine(err))
	}
	err = v.s.Validate(inst)
	var failed *js.ValidationError
	if errors.As(err, &failed) {
		return errors.New(firstFailure(failed))
	}
	return err
}

// firstFailure names the deepest first cause of a failure: where in the
// body, and why.
func firstFailure(e *js.ValidationError) string {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	at := "/" + strings.Join(e.InstanceLocation, "/")
	out := e.BasicOutput()
	why := oneLine(e)
	if out != nil && out.Error != nil {
		why = out.Error.String()
	}
	return clip(fmt.Sprintf("at %s: %s", at, why))
}

func oneLine(err error) string {
	return clip(strings.Join(strings.Fields(err.Error()), " "))
}

func clip(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage] + "…"
	}
	return s
}
