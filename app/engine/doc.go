// Package engine is the stream engine on object storage: the streams this
// node process writes, their appends through the process's write-ahead log
// (package wal), opening and recovery, data objects, garbage and reads.
//
// # Life of an append
//
//  1. Handle.Append(request) on the handle Engine.Open returned: holding
//     the handle is the proof that the stream is open on this process, so
//     nothing is looked up. A handle the engine has let go since (a close,
//     a hand-off) answers ErrNotLocal before any effect; the caller opens
//     the stream again.
//  2. Under the stream's gate (a mutex that only appends take): the write
//     rules (domain.WriteState.Decide) judge the request (closure, producer
//     stamp, match, writer sequence) and assign its timestamp (the owner's
//     clock, never below the previous record's) and offsets [next,
//     next+n); a refusal ends here. The records are added
//     to the in-memory tail, invisible to readers for now, and one
//     domain.Frame (stream, stream epoch, first offset, producer stamp,
//     records) is submitted to the WAL in gate order. The gate is released.
//  3. The caller waits, outside every lock, for the frame's WAL callback.
//  4. Durability point: the callback fires with nil only when the frame's
//     bulk and every earlier bulk are stored in the object store. It raises
//     the stream's confirm offset and wakes readers; the caller gets its
//     offsets. Reads never go past the confirm offset, so no reader sees a
//     record a crash could take back.
//
// Producer dedup state (id, epoch, last sequence) rides in the same frame
// as the records it guards. It is durable exactly when they are, and
// recovery rebuilds it from the frames: a failed upload leaves no dedup
// state behind, so the producer's retry is written, not silently
// acknowledged. A repeated sequence whose original is still in flight is
// acknowledged only once the original is durable. The writer sequence
// (Durable Streams Stream-Seq, which must grow bytewise) travels the same
// way: checked under the gate after the producer stamp, carried in the
// frame (a flags byte says which of the two a frame has), and kept per
// section in data objects.
//
// # The WAL
//
// Each node process has one WAL (package wal), passed in Config.WAL: the
// engine submits frames to it in gate order and learns from its callbacks
// when they are durable, which the WAL reports in submission order. Its
// package comment covers the bulks, the adaptive group commit, the order of
// acknowledgements, backpressure and fencing. The WAL keeps no stream
// state: the engine decides which bulks it may retire (WAL.Retire asks it,
// per stream, whether a bulk's frames are committed), and it fences and
// reads the WALs of other processes in the WAL's store (WAL.Store,
// wal.Fence).
//
// # Opening a stream, recovery and fencing
//
// Engine.Open proposes OpenStream at the next stream epoch. If the
// previous writer was another process (a restart of this node, or a node
// retired with FenceNode) that did not close the stream, it then fences
// that process's WAL and reads it (wal.Fence), and so for every earlier
// writer the stream lists as unrecovered (below). A fenced process can
// acknowledge nothing the fencer did not read (package wal says why), so
// what was read holds every record it acknowledged. Which writers those
// are, and where the stream ends, it takes from the metadata once its open
// applied (OpenStream lists the previous writer as unrecovered exactly
// when that one had not closed the stream), never from the view it read
// before proposing: a live writer may have closed the stream, and
// committed more, in between, and fencing its WAL would fail every append
// it takes.
//
// If the recovery fails after OpenStream applied, the metadata already
// names this process as the writer, so the next open here, or the handoff
// at shutdown, finishes the recovery from the same predecessors (with the
// frames already read, kept in memory) rather than opening from the data
// objects alone. If the open's outcome is unknown, nothing was read yet:
// the next open here finds the stream its own (if it applied) and recovers
// from the predecessors the metadata lists. If this process dies first,
// the predecessor is still in the metadata: OpenStream adds every writer
// it fences (one that never closed the stream) to the stream's Unrecovered
// list, and a takeover reads every WAL listed, oldest first, then the
// previous writer's. Frames that reach an offset written at a later stream
// epoch are dropped (supersede): a later writer wrote only after
// recovering what its predecessor acknowledged, so past that point an
// older WAL holds only records never acknowledged.
//
// Records of the stream past its committed end are rebuilt from those
// frames (with their producer state) and rewritten into the new process's
// own WAL, frame for frame at the new epoch with their producer stamps and
// writer sequences, all in one bulk (WAL.SubmitAll: one object, so a crash
// leaves all of them or none, as supersede requires), before any new
// append is taken, and they count in the uncommitted budget. That is the
// recovery's durability point: the writer proposes RecoveredStream, which
// empties the list, so the next takeover reads only this process's WAL.
// The records are then committed to a data object, whose section keeps
// every producer's state. If OpenStream applied but this process lost
// track of the recovery (a retry read an older view), the stream still
// lists its predecessors and the next open here recovers from them.
// CompleteTransfer lists a writer that vanished without closing the
// stream, as OpenStream does, and names no process of the target (owner
// epoch 0) until it opens the stream.
//
// The metadata fence (a higher stream epoch, a higher node epoch) and the
// object-store fence together mean a paused or partitioned old owner can
// neither commit metadata nor acknowledge a write the new owner will not
// see. tests/crash checks both: 20 SIGKILLs of an appending process, and a
// SIGSTOPped owner taken over and then resumed. tests/enginefaults runs
// chains of takeovers on a failing store, many of them dying
// mid-recovery, with an idempotent producer per stream retrying as
// producers do, and checks that every acknowledged record is there once,
// in order.
//
// A stream its writer closed with Engine.Close has every record in data
// objects, so the next writer opens it from the metadata alone and fences
// nobody: a clean transfer leaves the old node's WAL, and its other
// streams, untouched. A close whose outcome is unknown (the proposal timed
// out) may still apply, so the writer stops taking appends at once and,
// if asked to open the stream again, does so at a new epoch, which makes
// the pending close stale.
//
// # Idle streams (idle.go)
//
// An open stream that nothing writes or reads costs no CPU: uploads and
// compaction visit a dirty set of streams (joined when records become
// durable or an object of theirs commits), the retention sweep only
// streams with time rules. The lease holder's once-a-minute passes read
// indexes the view keeps (the unowned sweep the streams whose
// configuration can expire them, the dead-WAL pass the streams naming gone
// processes, only while one is not drained), and its listing of the WAL
// key space stops once only fences of gone processes are left, until a
// node registers or is fenced.
//
// With Config.ReleaseIdleAfter set, every local stream without time rules
// waits in a queue ordered by when it was last looked at. Each maintenance
// tick looks only at the entries older than the period: a stream opened
// since goes to the back, one with records not yet committed (or a seal
// not yet recorded, or a compaction due) too, and the others are let go
// in memory only. They stay open by this process in the metadata, so the
// next request reopens one (reopenOwn) from the view and its last data
// object's section, whose producer state and writer sequence cover every
// record: no metadata write, no WAL read. A handle held across the
// release returns ErrNotLocal, and readers waiting on it are woken, so
// both open it again. Streams with time rules stay: the retention sweep
// visits local streams only, and relies on the last timestamp in memory.
// CloseAll closes the streams not in memory from the metadata, after it
// has stopped reopening them.
//
// # From WAL to data objects
//
// Every --wal-upload-interval-ms, or as soon as --wal-upload-threshold
// bytes are uncommitted, Engine.Upload gathers each local stream's records
// in [committed, confirmed) into one data object of about MaxObjectBytes:
//
//  1. ReserveObjects through the log (an upload that dies after its PUT
//     leaves a reservation that expires into garbage: nothing leaks);
//  2. PutIfAbsent of data/<id>: a checksummed index (per stream: offsets,
//     byte range, and the producer table and writer sequence as of the
//     range's end, which is how dedup state outlives the WAL; format PDO2,
//     PDO1 objects without the writer sequence still read), then one frame
//     per stream, encoded straight into the object;
//  3. CommitObjects with one range per stream, written at the stream epoch
//     by its writer and starting at its end, which all advance at once;
//  4. memory keeps only the newest committed records of each stream, up to
//     TailRecords and TailBytes (1024 records, 64 KiB);
//  5. WAL.Retire deletes the oldest run of bulks whose every frame is now
//     committed, never the newest, in one Delete (S3 DeleteObjects); a
//     delete that fails part way leaves holes, which fencing goes past.
//
// Appends wait when MaxUncommittedBytes are not yet in data objects, and
// the WAL makes them wait beyond --wal-cache-size unacknowledged bytes, so
// memory stays bounded when the store is slower than the producers.
//
// Garbage is two-phase. Trim, delete, compaction and expired reservations
// mark objects in the metadata. The lease holder deletes the bytes first,
// then proposes DestroyObjects; a crash in between only repeats a delete.
//
// # WALs of gone processes (deadwal.go, walgc.go)
//
// A process that crashed (or was fenced) leaves in its WAL the appends it
// acknowledged and had not committed, and the bulks it had not retired.
// The lease holder's dead-WAL pass runs every minute, and at its next
// one-second tick whenever a node registers or is fenced (the nodes in its
// view change), one at a time, beside the maintenance loop, which goes on
// uploading meanwhile:
//
//  1. Engine.RecoverDeadWALs walks the streams that name a superseded
//     process (open on it, or listing it as unrecovered), when one not
//     found drained by the last pass is named (the view counts the
//     namings of each process: domain.State.NamedWALs), fences and reads
//     that process's WAL once, and takes over, here, each stream whose
//     records there go beyond its committed end and that no live process
//     holds open (at most 256 a pass, 8 at a time, started within 20 s):
//     Open recovers and commits them, Close lets the stream go again (a
//     request that found the stream open just before is refused by the
//     engine before any effect, and streams.Service.openAnd opens it again
//     and retries once); a later pass finishes a takeover whose recovery
//     or close failed. A stream whose records are all committed, or that
//     is deleted (kept for its forks, which read committed records only),
//     is left alone. A process none of whose named streams needs a
//     takeover is drained: its WAL holds nothing anyone needs, and it
//     cannot change (fenced; committed ends only grow).
//  2. Engine.CollectDeadWALs deletes the bulks of superseded processes
//     that no stream names, or that the pass found drained. A stream still
//     naming a drained process reads its fenced, emptied WAL on its next
//     open and finds nothing to recover, as it should.
//
// A process the view does not yet know is never touched. Fence objects
// stay, so a paused process that wakes up still finds its next key taken.
// Passes go on where the last stopped, so kept keys never hide later
// ones. A round over the whole key space that finds nothing of superseded
// processes but fences ends the listings until a node registers or is
// fenced, so an idle node makes no store requests. The WAL key space belongs to one cluster: two clusters sharing a
// WAL store would take each other's processes for gone ones.
//
// # Life of a read
//
// Handle.Read(from, max) never takes the append gate. Offsets
// still in memory (the tail) come from there, bounded by the confirm
// offset, with a channel that closes when it next grows (long-poll and
// SSE park on it). Older offsets come from data objects: the view maps the
// offset to its object (no LIST), the block cache returns the decoded
// section, fetching the index and then only that stream's byte range on a
// miss. Concurrent misses on one section share a single fetch; the cache
// is LRU-bounded by --block-cache-size; each read starts fetching the next
// two sections, so a sequential reader finds them cached. Record bodies
// are not copied out of the fetched bytes. A fork's offsets below its fork
// point are served from the source chain's data objects.
//
// A page says whether the stream is closed (ReadResult.Closed), read under
// the same lock as its tail, so that the closure and the records a reader
// gets are of one moment; the metadata view, which records the seal
// after the records are durable and after readers woke to them, is not
// asked. The records of an append that seals the stream stay hidden from
// readers until its seal is recorded (SealStreamBy applied): a reader
// waiting at the tail then gets them and the closure in one answer, as
// Durable Streams requires of long-poll and SSE, rather than the records
// first and the closure on a second wake-up. The sealing append's frame
// says it seals (domain.Frame.Seals, once the cluster is at
// domain.LevelSealFrames), so the records and the closure are one write:
// should the seal's record fail, the records stay hidden, and the seal is
// recorded by whichever comes first of the upload that commits them (in
// the commit's own proposal, so no committed record outlives the frame
// without its seal), a close of the stream, a request judged on the seal,
// and a takeover that recovers the frame (before it shows the records).
//
// A close or delete of a local stream is in the log, for every other node
// to see, before its proposer learns the outcome. So the stream is marked
// as ending before the proposal is sent (ending.go): until the outcome is
// known, Read waits and End answers ErrEnding, and no reader here reports
// a stream that others already find gone or elsewhere.
package engine
