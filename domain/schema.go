package domain

import (
	"fmt"
	"strings"
)

// A schema is a named document in the metadata registry (SpaceRegistry,
// under SchemaKey) that streams bind to by name in their configuration
// (StreamConfig.Schema). A stream that validates (StreamConfig
// SchemaValidate) takes only records whose bodies its schema accepts.

// Schema formats, as stored. JSON Schema is the one format this release
// validates.
const (
	SchemaFormatJSON = "json-schema"
)

// SchemaContentTypes maps the content type of a registration to its format.
var SchemaContentTypes = map[string]string{
	"application/schema+json": SchemaFormatJSON,
}

// schemaExtensions maps a name's extension to its format, for a
// registration without a content type of its own.
var schemaExtensions = map[string]string{".json": SchemaFormatJSON}

// MaxSchemaName bounds a schema's name.
const MaxSchemaName = 200

// CheckSchemaName refuses a name that is empty, too long, or holds more
// than letters, digits, '.', '_' and '-' (a name is a URL path segment and
// part of a registry key), or starts with '.'.
func CheckSchemaName(name string) error {
	if name == "" || len(name) > MaxSchemaName {
		return malformed("schema name must be 1 to %d bytes", MaxSchemaName)
	}
	if name[0] == '.' {
		return malformed("schema name %q starts with '.'", name)
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return malformed("schema name %q holds %q: use letters, digits, '.', '_' and '-'", name, c)
		}
	}
	return nil
}

// SchemaFormatOf is the format of a registration: its content type's, or
// else its name's extension's. ok is false when neither names a format.
func SchemaFormatOf(contentType, name string) (string, bool) {
	if contentType != "" && !SameContentType(contentType, DefaultContentType) {
		f, ok := SchemaContentTypes[strings.ToLower(mediaType(contentType))]
		return f, ok
	}
	for ext, f := range schemaExtensions {
		if strings.HasSuffix(name, ext) {
			return f, true
		}
	}
	return "", false
}

// schemaKeyPrefix starts the registry key of every schema.
const schemaKeyPrefix = "pico/schema/"

// SchemaKey is the registry key of schema name.
func SchemaKey(name string) string { return schemaKeyPrefix + name }

// Schema is a registered schema.
type Schema struct {
	Format string
	Body   []byte
}

// schemaVersion is the first byte of an encoded Schema:
//
//	u8 version=1 | uvarint len | format | body
const schemaVersion = 1

// EncodeSchema is the registry value of s.
func EncodeSchema(s Schema) []byte {
	e := &encoder{buf: []byte{schemaVersion}}
	e.str(s.Format)
	e.buf = append(e.buf, s.Body...)
	return e.buf
}

// DecodeSchema decodes a registry value written by EncodeSchema; the body
// aliases b.
func DecodeSchema(b []byte) (Schema, error) {
	if len(b) == 0 || b[0] != schemaVersion {
		return Schema{}, fmt.Errorf("%w: schema of an unknown version", ErrDecode)
	}
	d := &decoder{buf: b[1:], alias: true}
	s := Schema{Format: d.str()}
	if d.err != nil {
		return Schema{}, d.err
	}
	s.Body = d.buf
	return s, nil
}
