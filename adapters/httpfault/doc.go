// Package httpfault injects faults at a listener's HTTP edge, for testing
// clients against a real server: the Durable Streams reference server's
// test hook, so that a client's conformance suite runs against a node
// unchanged, and the edge faults of our own tests.
//
// POST /_test/inject-error arms one fault for a path (a later one for the
// same path replaces it); DELETE /_test/inject-error clears them all. A
// fault fires on the next count requests to its path (of its method, if it
// names one), each with its probability; a request it does not fire on
// passes untouched and uses none of the count. When it fires it waits
// delayMs plus up to jitterMs, then either drops the connection (HTTP/1
// closes it with nothing written, HTTP/2 resets the stream), answers
// status (with Retry-After if given), or changes the answer the node
// writes: a 200 body other than an event stream is cut to
// truncateBodyBytes and, with corruptBody, made invalid (its first two
// bytes and a tenth of the others overwritten with ASCII letters); an
// event stream gets injectSseEvent's event before its first byte.
//
// Faults live in the memory of one listener of one process. The hook is a
// testing aid: pico serve mounts it only with --test-fault-injection,
// which it refuses together with --auth required.
package httpfault
