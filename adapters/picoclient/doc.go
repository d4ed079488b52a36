// Package picoclient is the Go client of PicoMQ's Pico protocol: create,
// append, read, follow, inspect, trim and delete streams on a node.
//
// A Client talks to one endpoint and is safe for concurrent use. Every
// call takes a context first. Streams are named by their path, such as
// "/orders/42".
//
//   - Append writes records as one atomic request and never retries it.
//   - A Producer appends exactly once: it batches records (linger, record
//     and byte bounds), keeps a bounded number of batches in flight, and
//     stamps each batch with its id, epoch and seq, so that a batch sent
//     again after a lost answer, a node restart or a failover is written
//     once, and batches land in the order records were appended.
//   - Read ranges over a stream up to its tail; ReadPage reads one page.
//   - Subscribe follows a stream live with long polls, reconnecting with
//     backoff and resuming from the next seq it has not delivered.
//   - JoinAs makes a consumer group member that keeps its session with
//     heartbeats, joins again when the group rebalances (afresh once the
//     group no longer knows it) and publishes each new assignment.
//
// Refusals are *APIError values, which errors.Is matches against
// ErrNotFound, ErrClosed, ErrFenced, ErrSequenceGap and the other Err*
// values. When another node owns a stream, the node answers 307 and the
// client follows it, sending its credential (Options.Token) again on
// every hop, but never from https to http.
//
// The API uses only this package's types and the standard library.
package picoclient
