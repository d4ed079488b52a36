// Package histories runs random concurrent histories of stream operations
// against nodes built from the real app packages on in-memory adapters,
// with faults in the object store and the metadata log, transfers,
// partitions and crashes, and checks every history for linearizability
// (package linearize). rapid draws each history's plan and shrinks a
// failing one; the plan, not the interleaving, is what it shrinks.
//
// Clients follow a redirect to the node it names and record every other
// error that does not settle the outcome (unavailable, a timeout, a failed
// store or log) as unknown. After the plan has run, the faults stop and a
// final read of every stream joins the history, so an acknowledged record
// that is missing fails the check even if no client read it.
//
// Covered: failed, stalled and ambiguous (done, reported failed) PUTs,
// GETs, log appends and reads; transfers mid-traffic; a node cut off from
// the log with its store calls held, fenced by failover or not, then
// resuming; crashes with a restart, whose old process still answers the
// requests in flight on it (a zombie); idle streams leaving memory. Built
// with the picobroken tag, an engine that acknowledges before the WAL
// stores is caught (TestCheckersCatchBrokenEngines).
//
// Closes carry a record or none: the sealing frame says it seals, so a
// takeover recovers the records and the closure together.
//
// Not covered here: clock steps; reordering beyond what delays give. The
// real binary over HTTP, with Postgres and S3 faults and partitions, is
// package nemesis.
package histories
