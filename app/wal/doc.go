// Package wal is a node process's write-ahead log in the object store. The
// engine (package engine) submits frames to it and learns, by a callback,
// when they are durable. The WAL knows frames, bulks and keys, and nothing
// of streams' state: which stream a frame extends, and whether it is
// committed to a data object yet, are the engine's to say.
//
// # Key space and bulks
//
// Each node process writes its own key space, wal/<node>/<node epoch>/<seq>
// (zero-padded, so key order is sequence order; the names are in domain). A
// bulk is one object: a header (node, epoch, seq, with its own CRC-32C) and
// frames, each u32 length, u32 CRC-32C, body. Bulks are written with
// PutIfAbsent. On S3 every put also carries a CRC32 checksum the server
// checks, and requests are signed with UNSIGNED-PAYLOAD (as the SDK does
// over https), so no body is hashed twice.
//
// # Adaptive group commit
//
// With no upload in flight a frame is sealed and uploaded at once, so a
// lone append costs one PUT and waits for no timer. While uploads are in
// flight, arrivals accumulate and leave as one bulk when an upload
// completes (or earlier, pipelined, when MaxBulkBytes is reached, up to
// MaxInFlight uploads). When an upload completes with none other in
// flight, the next bulk lingers (linger.go) until as many submissions as it
// acknowledged have come back, or for at most twice the recent PUT latency
// (MaxLinger, 20 ms, caps it; once is too short when the CPU is saturated
// and the appenders take longer to come back). Appenders that wait for
// each acknowledgement then share one PUT instead of splitting into two
// cohorts that each wait two PUTs: with 64 such appenders, a PUT carries
// about 64 records instead of 32 (BenchmarkClosedLoopAppenders). A lone
// appender is never held; a steady flow of appends that do not wait for
// each other pays part of a wait for PUTs three times as large
// (BenchmarkOpenLoopAppends).
//
// On a slow store the wait for an upload to complete costs more than
// another PUT, so while uploads are in flight the draft also leaves once
// its first frame has waited the recent PUT latency divided by Pipeline
// (4), and never less than PipelineGap (5 ms), and a linger lasts no
// longer than that (pacer.go): on S3 Standard up to four bulks overlap and
// an append waits a fraction of a PUT for its bulk; on a store faster than
// the gap an upload completes first and nothing changes.
//
// Sealed bulks go to long-lived uploader goroutines, as many as bulks have
// been in flight at once: a PUT runs deep through the S3 client, and a
// fresh goroutine per bulk would grow its stack anew every time.
//
// # Acknowledgements
//
// A frame's callback gets nil only when its bulk and every earlier bulk are
// stored: acknowledgements go out strictly in sequence order, so frames
// submitted in some order become durable in that order. SubmitAll puts
// frames in one bulk, one object: a crash leaves all of them or none.
// MaxBufferedBytes of unacknowledged frames make Submit wait: memory stays
// bounded under a producer faster than the store. A failed PUT is retried
// until it is stored (or for RetryFor, when set); a precondition failure
// is resolved by reading the key back (our own bytes: an earlier attempt
// succeeded; a fence: we were fenced, ErrFenced). A store that fails for a
// while only delays acknowledgements, in order: the engine bounds how long
// an append waits. When a bulk cannot be stored (fenced, past RetryFor, or
// abandoned by Close after CloseWithin), the WAL fails: nothing after it
// is ever acknowledged, and every frame not yet acknowledged gets the
// error. WAL.Stats counts the PUTs, the appends in them and the time they
// took (retries included); /metrics shows them as wal_puts_total,
// wal_submissions_total and wal_put_seconds_total.
//
// Retire deletes the oldest run of acknowledged bulks whose every frame
// the caller reports as committed elsewhere, never the newest acknowledged
// bulk, in one Delete (S3 DeleteObjects); a delete that fails part way
// leaves holes, which Fence steps over.
//
// # Fencing
//
// Fence ends another process's WAL and returns every frame it stored
// before the fence. A new writer of a stream calls it on the stream's
// previous writer; after it, that process can acknowledge nothing the
// fencer did not read, however long it was paused:
//
//   - The writer stores bulks at consecutive sequence numbers with
//     PutIfAbsent and acknowledges bulk k only when bulks 1..k are stored.
//   - The fencer reads the writer's bulks from sequence 1 up to the first
//     missing sequence number and puts a fence object there with
//     PutIfAbsent. Of the writer and the fencer, exactly one gets that
//     key. (Before the writer acknowledged anything, its first bulk may
//     still be in flight while a later one is stored; once it has, its
//     newest acknowledged bulk is never retired, so a fence at a retired
//     key 1 just moves the scan on to the oldest stored bulk, as past a
//     hole.)
//   - If the fencer does, the writer's upload at that key fails forever,
//     so it acknowledges nothing from there on, however long it was
//     paused; everything it did acknowledge lies in the bulks the fencer
//     read. If the writer does, the fencer reads that bulk too and tries
//     the next key.
//   - A missing key below the writer's newest bulk is a hole: a bulk still
//     in flight, or one a retire deleted (committed, so not needed). The
//     fencer fences it too, keeps what it read, and goes on past it until
//     its fence lies after every stored bulk.
//
// Fencing twice is harmless: the second fencer stops at the first's fences
// as at holes. Fence objects must stay: a paused writer that wakes up
// retries its put at the key its fencer took, and must find it taken.
package wal
