// Package meta is the node's metadata plane: it proposes commands to the
// shared SQL log with group commit, tails the log, applies every row to the
// domain State and publishes an immutable view per applied batch. Request
// paths read the view and never query SQL.
//
// # Life of a proposal
//
//  1. A caller (Plane.Propose) queues its commands (bounded queue).
//  2. The flusher, one per process, takes every queued proposal up to 1024
//     commands (readers take up to domain.MaxRowCommands), encodes one row and appends it at the next index. One
//     append is in flight at a time; proposals that arrive meanwhile fill
//     the next row. The flusher does not wait for a row to be applied
//     before appending the next (up to 8 rows await delivery).
//  3. Append fails with ErrConflict when another writer took the index,
//     and it moves to the new tail and retries. After an attempt whose
//     outcome was lost with a connection, the flusher reads the row back:
//     equal bytes mean that attempt succeeded, other bytes are a conflict,
//     and until the row can be read it retries at the same index (a row
//     truncated meanwhile, or giving up while the row may be stored, gives
//     ErrOutcomeUnknown). Other errors are retried with backoff (10 s by
//     default, then ErrUnavailable). A command is never appended twice.
//  4. The tailer (woken by the flusher, by Postgres LISTEN/NOTIFY, or by a
//     poll every 50 ms, which backs off to once a second while polls find
//     nothing: on SQLite polling was half an idle node's CPU) applies rows
//     in order and publishes the new view. A row this node just stored is
//     applied from the bytes it wrote, without reading it back; other rows
//     are read from the log.
//  5. Only then does the flusher hand each proposal its results, so a
//     caller always reads its own write in View().
//
// Request paths read View(), never SQL. A slow database delays new
// commands only.
//
// # Snapshots and truncation
//
// Every 1024 applied rows a node encodes the state in the background and
// stores it (PutSnapshot never regresses). A large state is rewritten only
// once the rows since its last snapshot add up to an eighth of its size,
// or after 64 intervals: a million idle streams make a 60 MB snapshot,
// which should not be rewritten for every 1024 small rows. It truncates
// the log through the newest snapshot that is at least 30 s old
// (TruncateDelay), so a node lagging by less than that catches up from
// rows; a cold start reads one snapshot plus at most 30 s of rows. A node
// whose next rows were truncated (ErrTruncated, or a hole) installs the
// snapshot; its proposals folded into it get ErrOutcomeUnknown (re-read
// the view, then retry if absent). A row that does not decode halts the
// plane (ErrHalted): no more applies or proposals on that node, and /ready
// fails, rather than letting it fork from the others. So does a command or
// snapshot above Config.Level, with a message naming the level it needs;
// snapshots are written in the version the cluster's level reads
// (domain.SnapshotVersionAt), and wait while the state holds what that
// version cannot carry.
//
// # The maintenance lease
//
// LeaseKeeper holds the single SQL lease (10 s TTL, renewed every 2.5 s,
// its epoch a fencing token). It steps down as soon as it cannot confirm a
// renewal within TTL minus one renewal interval, before anyone else may
// take the lease. The one exception is its own successor: a process
// registered under the same node id names its predecessor (node-ID-EPOCH,
// as the view had it before registering) and takes that holder's lease at
// once, since its registration fenced it. So when the process that crashed
// held the lease, its restart runs the chores at once instead of waiting
// out the dead process's TTL; the superseded process cannot take the lease
// back. One that is still running believes it holds the lease until its
// next renewal fails or it sees its fence; whatever it proposes meanwhile
// is refused as fenced. A registered epoch that no process ran at (a
// fence, or a start whose outcome was lost) names nobody, and the restart
// waits out the TTL as before.
//
// Lease-gated work (garbage collection, reservation expiry, the bulks gone
// processes left in their WALs, retention, failover) checks Held() before
// each step; correctness never depends on it. A chore with nothing to do
// proposes nothing (reservation expiry looks for an expired one in the
// view first), so an idle cluster appends no log rows.
package meta
