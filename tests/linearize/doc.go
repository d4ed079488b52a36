// Package linearize checks recorded histories of stream operations for
// linearizability with porcupine.
//
// The model is one stream as a client sees it, written from the protocol's
// promises rather than from the server's code so that the two cannot share
// a bug: records at consecutive offsets from 0, a seal, a start raised by
// trims, idempotent producers (epoch and sequence), conditional appends on
// the next offset, and a name that can be deleted and created again. Every
// append writes one record, or none when it only closes.
//
// A history is partitioned by stream. An operation whose result the client
// never learned (a timeout, a reset connection, a 5xx) is recorded with the
// Unknown outcome and never returns: porcupine may then place it anywhere
// after its call, or in effect nowhere, and every later observation must
// agree with one of those choices. A dozen such appends are more than the
// search can order, so before it, what the reads saw settles them where it
// can without ruling out any linearization of a correct run (settle.go).
//
// Two results are not fixed by the order of operations alone, and the model
// keeps what they allow instead of guessing:
//   - a trim's effective start is clamped to what is committed to data
//     objects, so the start is a range narrowed by what trims, reads and
//     heads then report;
//   - a duplicate of a producer's older request reports the offsets of the
//     producer's last accepted one, so only a duplicate of the last request
//     has its offset checked.
package linearize
