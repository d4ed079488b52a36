// Package jsonschema compiles JSON Schema documents (drafts 4 to 2020-12,
// the draft a document names, else 2020-12) into validators of record
// bodies: the schema registry's ports.SchemaCompiler, on the library
// github.com/santhosh-tekuri/jsonschema/v6.
//
// A schema is one document: references to other documents by URL are not
// loaded (a compile error), so registering a schema never makes the node
// fetch anything. A record is validated as one JSON value in UTF-8; a
// body that is not JSON fails with that reason, and a failure names the
// JSON pointer of the first place in the body that does not match.
package jsonschema
