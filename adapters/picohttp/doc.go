// Package picohttp serves the Pico protocol over HTTP. A stream is named by
// its URL path: PUT creates it, POST appends to or trims it, GET reads it
// (catch-up, long-poll or server-sent events), HEAD describes it and DELETE
// removes it. GET / lists streams.
//
// The listener runs on echo (cmd/pico serves it over HTTP/1.1 and h2c on
// one port), with the handler chain of package streamroute. It parses and
// bounds everything (bodies through http.MaxBytesReader, batches through
// the codecs of package picowire, headers through strict parsers, and a
// header read once given twice with different values is a 400, never
// settled by its first line: headerval.Once) and drives ports.Streams, which app/streams.Service implements. Its OpenAPI document (openapi.yaml,
// OpenAPI) is served by the admin listener.
package picohttp
