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
package histories
