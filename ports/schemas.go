package ports

import (
	"context"
	"errors"

	"github.com/picomq/pico/domain"
)

// ErrSchemaNotFound: no schema of that name is registered.
var ErrSchemaNotFound = errors.New("no such schema")

// Schemas is the schema registry: named schemas in the replicated
// metadata, which streams bind to by name (domain.StreamConfig.Schema).
// Any node serves the registry; SetStreamSchema is served by the stream's
// owner (a *RedirectError elsewhere), as appends are.
type Schemas interface {
	// PutSchema stores or replaces schema name; a schema that does not
	// compile in its format is an ErrBadRequest that says why. created
	// is false when it replaced one.
	PutSchema(ctx context.Context, name string, s domain.Schema) (created bool, err error)
	// GetSchema returns schema name, or ErrSchemaNotFound.
	GetSchema(ctx context.Context, name string) (domain.Schema, error)
	// DeleteSchema removes schema name, or answers ErrSchemaNotFound.
	// Streams bound to it keep the binding; those that validate refuse
	// appends until it is registered again.
	DeleteSchema(ctx context.Context, name string) error
	// SetStreamSchema binds stream name to schema ("" unbinds it, and
	// validate must then be false) and returns the stream's info.
	SetStreamSchema(ctx context.Context, name, schema string, validate bool) (StreamInfo, error)
}

// SchemaCompiler turns a registered schema into a validator of record
// bodies. It does no I/O: a schema that refers to another document by URL
// does not compile. The adapter is itself in memory; its conformance suite
// is tests/conformance's SchemaCompiler.
type SchemaCompiler interface {
	// Compile returns the validator of s, or an error saying why s is not
	// a schema of its format (or names a format it does not know).
	Compile(s domain.Schema) (RecordValidator, error)
}

// RecordValidator checks one record body against a compiled schema.
type RecordValidator interface {
	// Validate returns nil when body matches, else an error naming where
	// in the body it fails and why, fit to show a client in a 400.
	Validate(body []byte) error
}
