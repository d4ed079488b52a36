package conformance_test

import (
	"testing"

	"github.com/picomq/pico/adapters/jsonschema"
	"github.com/picomq/pico/tests/conformance"
)

func TestSchemaCompiler(t *testing.T) {
	conformance.SchemaCompiler(t, jsonschema.Compiler{})
}
