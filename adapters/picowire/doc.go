// Package picowire is the Pico protocol's wire kit: the binary and JSON
// batch formats of appends and read pages, their media types, and the
// strict parsers of the protocol's read position and flag values. The
// listener (adapters/picohttp) and the client (adapters/picoclient) both
// speak through it, and so do the tests that talk to a real node.
//
// It is a protocol codec, not product rules: records (domain.Record) and
// everything the engine and data objects store stay in domain. Unsigned
// header decimals are parsed by adapters/internal/wire/headerval, shared with
// the Durable Streams listener.
//
// # Formats
//
// The binary formats (batch.go) are big-endian, length-prefixed and
// versioned by their first byte: a batch request carries records without
// timestamps (the stream's owner assigns them), a read response adds each
// record's offset and timestamp. Each record starts with its key (i32
// length, -1 for none), as the original's keyed layout does; header values
// are bytes, header names UTF-8. The JSON formats (json.go) are a
// {"records": [...]} batch request and a [...] read page; keys, header
// values and bodies that are not UTF-8 travel as key_b64, in headers_b64
// and as body_b64. A batch request member the format does not have is an
// error, never dropped. Valid JSON batches are decoded in one pass
// (jsonfast.go); anything else takes a careful path that names the problem.
// A JSON string decoded as text (a body, a header name or value) must be
// text: invalid UTF-8 and lone surrogate escapes, which encoding/json would
// replace with U+FFFD, are errors naming the record and the field
// (jsontext.go). The fast path takes only strings without escapes in valid
// UTF-8, so the check costs it nothing.
//
// # Bad input
//
// Every decoder is bounded by its input and by the BatchLimits it is given
// (a limit of 0 admits nothing), pre-sizes nothing past what the bytes left
// could hold, and never panics. Every error wraps domain.ErrMalformed with a
// message fit to show a client in a 400; records and headers are numbered
// from 0. Each decoder has a fuzz target (fuzz_test.go) that checks what it
// decodes survives a round trip through the matching encoder.
//
// # Dependencies
//
// picowire is one of the shared wire kits that tests/arch names: any
// adapter, cmd/pico and tests may import it, and it imports only the
// standard library, domain and adapters/internal. It never imports another
// adapter or a third-party library.
package picowire
