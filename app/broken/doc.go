// Package broken names behaviours that are deliberately wrong, so that the
// tests of the checkers (linearizability, the final-state check) can show
// that each is caught. A normal build has none of them: every switch is a
// constant false the compiler removes with the code it guards. A build
// with the picobroken tag turns on the one PICO_BROKEN names, for the
// whole process:
//
//   - ack-early: an append is acknowledged before its WAL bulk is stored;
//   - skip-fence: a takeover reads the previous writer's WAL without
//     fencing it, so that writer can still store and acknowledge;
//   - stale-read: reads return records past the confirm offset, which may
//     never become durable.
package broken
