// Package streams is the name-level stream service both protocol listeners
// drive (ports.Streams): it maps names to streams through the metadata view,
// opens a stream on first use (reviving one its previous owner closed or
// lost), routes requests for streams another live node serves, and keeps
// record retention and stream expiry.
//
// # What the service does with a request
//
//  1. Routing. Route(name) reads the view: a stream open on another live
//     node, or held by nobody and being transferred to another node, is
//     answered with 307 to that node's advertised address. Any other
//     stream nobody holds open is served here.
//  2. Opening. The first request for a stream on this node opens it
//     (Engine.Open: OpenStream at the next epoch, fencing and recovering a
//     predecessor that vanished), and every request after it finds the
//     stream's handle there at once. This is how a stream closed or lost
//     by its previous owner is revived.
//  3. Creating. PlaceStream (or, before every node reads placements and
//     with Config.Place off, CreateStream with Open) carries the encoded
//     domain.StreamConfig (content type, record retention, expiry, schema
//     binding) as the stream's meta; an equal config again is success,
//     another is a conflict; a binding must name a registered schema; a lost race for the name is settled by reading the winner.
//     A stream placed on another node is answered here when empty, and
//     redirected there when the create carries records or a close, which
//     that node writes (place.go).
//  4. Appending. The service checks that the records suit the stream
//     (ports.Unfit: content type, JSON; then, on a stream that validates,
//     its schema: schemas.go) and Handle.Append has the
//     write rules (domain.WriteState.Decide) judge the request under the
//     stream's gate: closure, producer stamp, conditional tail, writer
//     sequence; ports.AppendOutcome turns the verdict into the answer.
//     An unfit request still goes to the engine (Handle.Refuse), since a
//     closed stream answers closed first. A seal refuses every later append
//     at once and is recorded with SealStream after the records before it
//     are durable; the append is acknowledged after that, and waiting
//     readers are woken. A close of the stream that gets its gate in
//     between (a takeover's, a shutdown's) records that seal itself,
//     before CloseStream, so the seal is never lost with the close.
//     Closing again is idempotent, unless the close is stamped by a
//     producer, epoch or sequence other than the closing request's (that
//     is refused as closed); a producer's replayed closing append is a
//     duplicate and acknowledged. The seal's record names the request
//     that sealed the stream (SealStreamBy), so that a duplicate can say it
//     repeats another (AppendResult.RepeatsClose), on this process or on one that opens
//     the stream later; a seal recorded by SealStream names none, and then
//     every duplicate counts as repeating it.
//  5. Reading. Handle.Read returns the page, the durable tail, whether
//     the stream is closed there, and a channel that closes when the
//     stream next changes (append durable, seal, delete). Reads and Head
//     take the closure from the engine with the tail, never from the
//     view, whose seal lags the readers' wake-up: a closing append's
//     records and its closure reach a reader together. Long-poll waits on it (--long-poll-timeout-sec, then
//     204); SSE writes one event per record (id = its offset) and a control
//     event when caught up or closed, for up to --sse-max-duration-sec.
//  6. Forks. Fork pins the fork point in the source's committed records
//     (Handle.CommitThrough), proposes CreateFork, and writes the fork's
//     first records: for a sub-offset into a non-JSON source, the cut
//     prefix of the record at the fork point; then any initial records. A
//     fork's own offsets start at the fork point; Handle.Read serves
//     offsets below it from the source chain's data objects, on any node.
//     Fork requests are idempotent: the fork point and sub-offset asked for
//     are kept in the stream config.
//  7. Idle TTL. A stream with an idle TTL (Durable Streams Stream-TTL)
//     expires that long after its last read or write; every service method
//     but Head and List counts as an access. Access times live in memory on
//     the writer, and only the writer judges the idle TTL; a stream opened
//     anew (after a restart or a handoff) starts its window again, so a
//     move can lengthen an idle TTL but never cuts one short. On a clean
//     shutdown (Service.HandOff) the writer records in each such stream's
//     config that it held it until then, at its stream epoch
//     (StreamConfig.AccessedAtMs and AccessedAtEpoch, with SetStreamMeta),
//     and a stream nobody holds open expires from that time while the
//     epoch is still the stream's. For one whose last writer died without
//     recording, the lease holder counts the window from when its sweep
//     first found the stream unowned at its epoch (any access through the
//     cluster opens a stream at a higher epoch, which starts the count
//     again), then takes the stream over, which fences the old writer's
//     WAL (a superseded process may still be running and appending), and
//     deletes it unless the takeover recovered records beyond the end it
//     had then, found an access, or found the stream opened by someone else
//     since; otherwise it holds the stream and judges it by its own
//     accesses (unowned.go). While the takeover runs the stream does not
//     count as expired; once judged unused it refuses requests
//     (unavailable: try again) and is judged once more before the delete,
//     so a request served just before shows. A takeover whose recovery
//     failed is taken up again by the next sweep. Reads a superseded
//     process served are not counted.
//  8. Retention. Every node sweeps the streams it holds open: records
//     older than the stream's TTL are trimmed (timestamps are monotonic per
//     stream, so the cut is the first young record; only committed records
//     can be trimmed), and a stream past its expiry is deleted, once it is
//     at least 3 s old (one made already expired is still being answered
//     for by its creator). The maintenance lease holder also deletes
//     expired streams nobody holds open, visiting only the streams whose
//     configuration can expire them (domain.State.ExpiringStreams). An expired stream is "not found"
//     from the moment it expires.
//
// Records are protocol-neutral (domain.Record: owner timestamp, key,
// headers, body), so the Durable Streams listener reads what Pico wrote and
// the reverse (it shows bodies only).
//
// # Schemas (schemas.go)
//
// The service is also the schema registry (ports.Schemas): a schema is a
// registry key-value entry (domain.SchemaKey) holding its format and body,
// checked by compiling it before it is stored, so any node serves it. A
// stream's binding is part of its config, rebound by its owner with
// SetStreamMeta. A validating stream's appends are checked before the
// write rules judge them, with the schema compiled once per registry
// revision (Config.Schemas compiles); a refusal names the record and
// where its body fails, and the whole request is refused. A schema deleted
// under a validating stream refuses its appends until registered again.
//
// # Transfers (transfer.go)
//
// An operator moves a stream with pico admin transfer NAME --to-node N
// (POST /admin/transfer, Service.Transfer), asked of any node. StartTransfer
// of an open stream is refused unless its writer proposes it, so another
// node records a request in the registry that the writer takes
// (transferask.go). The writer records StartTransfer,
// records an idle-TTL stream's last access (as a handoff does), and closes
// the stream (Engine.Close). The target opens it as soon as it applies the
// transfer and sees the stream let go (node.takeTransfers), or at the
// next request for it. Until the target opens it, nobody else may
// (OpenStream refuses others; the engine answers them ErrNotOwner, which
// the service turns into a redirect to the target), and every node routes
// its requests there. The target serves them as soon as the transfer
// reaches it: while its view still shows the writer holding the stream, a
// request waits for the close to arrive (awaitLetGo, 5 s at most, then it
// goes to the writer), since the writer, which applied its close first,
// would only send it back. The writer itself may open it again after a close of
// unknown outcome, and serves it until it lets go (a retried transfer then
// closes it); appends that reach its gate during the close wait, then find
// the stream gone and go to the target. A transfer holds only while its
// target has slots (State.PendingTransfer): a target fenced, or given zero
// slots, lets the stream open anywhere again, and a new transfer replaces
// it.
package streams
