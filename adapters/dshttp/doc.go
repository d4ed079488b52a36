// Package dshttp serves the Durable Streams protocol over HTTP, driving the
// same stream service as the Pico listener, so a stream written with one
// protocol reads back with the other. A stream is named by its URL path as
// sent: PUT creates it, POST appends to or closes it, GET reads it
// (catch-up, long-poll or server-sent events), HEAD describes it and DELETE
// removes it.
//
// Each stored record is one Durable Streams message: a whole append body,
// or for application/json streams one element of the appended array.
// Offsets count records. Stream-Seq is scoped per stream.
//
// It runs on the same ports.Streams as Pico (--protocol ds, or --ds-listen
// beside Pico). Its offsets are 0000000000000000_ and the record offset in
// 16 digits, so they sort bytewise and map one to one onto records. A
// non-JSON append is one record; a JSON append (application/json) is one
// record per element of a top-level array, each compacted, and a JSON read
// is the records joined into one array. The stream service refuses any
// record of a JSON stream that is not one JSON value in UTF-8, from either
// protocol (domain.ValidJSON), so that such a read always parses; this
// listener checks and compacts a JSON body in one pass before splitting
// it, and the service checks each message again, as it does whoever wrote
// it. A lone surrogate escape ("\ud800" without its low half) is valid
// JSON syntax but no text, and every reader would decode it to U+FFFD, so
// it is refused like invalid UTF-8: a 400 naming the message and the byte.
//
// An append is one service call: the body is decoded by the request's
// Content-Type, which the service checks against the stream's
// (AppendRequest.ContentType, by stream identity, so a stream deleted and
// created again with another type refuses it); only a refused request
// looks the stream up, to answer in the protocol's order. Its answer
// carries the common headers and Stream-Next-Offset (with Stream-Closed
// and the producer's headers when they apply), and no more: each header
// costs the server and the client about a microsecond, and an answer
// without content needs no Content-Type, nor a POST's answer a
// Cache-Control.
//
// On a closed stream a producer's request is refused as closed (409,
// Stream-Closed) before its stamp is judged, unless it repeats the request
// that closed the stream (§5.2.1): a stale epoch, a gap, and a duplicate
// of another request all get 409, read off the write rules' verdict
// (closedFirst), and so does a close without data stamped by any other
// producer, epoch or sequence, which the write rules refuse themselves. Pico answers by the verdict as it comes, producer first,
// as the original does. Stream-Seq is the append's writer sequence:
// checked under the stream gate after the producer stamp and made durable
// with the records, in WAL frames and data object sections, like producer
// state. Stream-TTL is the idle TTL and Stream-Expires-At the stream
// expiry of the service; Stream-TTL: 0, a window of no time, becomes an
// expiry at the moment of creation (an idle TTL of 0 means none), so the
// stream is made, reported to its creator, and gone. Forks map onto
// Streams.Fork. SSE sends each page as one data event and its control
// event in one write, and ends the response if records the reader has not
// seen are trimmed meanwhile, so that it comes back and is told (410).
//
// A request header read as one value (Content-Type where it decides the
// body, Stream-TTL, Stream-Expires-At, Stream-Closed, Stream-Seq, the
// fork and Producer-* headers) given twice with different values is a 400
// (headerval.Once), judged where the request reads it, so a missing or
// closed stream still answers first; a repeat of one value is that value.
//
// The subscription API (package app/subscriptions) is served under
// <root>/__ds/, beside the webhook signing keys (jwks.json).
package dshttp
