// Package nemesis runs three real pico processes on one Postgres and one
// S3 server, with clients on both protocols, while a seeded schedule of
// faults hits them: kill -9 and restart, SIGSTOP past the failover window
// (also while the store holds the paused node's last writes until after
// its takeover), partitions of one node from the database, the store or
// both (each node reaches them through its own tests/netfault links),
// transfers and drains mid-traffic, Postgres restarted in immediate mode
// or paused, and an S3 fault proxy (tests/s3fault) between every node and
// the store.
//
// A run is a sequence of rounds, each on fresh stream names so that the
// linearizability check of one round stays small however long the run:
// traffic and faults for the round's length, then the faults heal, every
// stream is closed, and the round is checked twice, by porcupine over the
// recorded history (tests/linearize) and directly on the final state:
// every acknowledged record present exactly once at its acknowledged
// offset, no record written twice, each producer's records in its order,
// and Pico and Durable Streams reading the same bytes. Clients pause 20 to
// 40 ms between operations, and the reads settle most appends of unknown
// outcome, so that the search decides each round.
//
// The default test run has one short run of a fixed seed, and runs the
// nemesis against the deliberately broken builds (package broken), each of
// which it must catch. tests/soak.sh runs it for longer. Flags:
// -nemesis.duration and -nemesis.round (traffic time of the run and of one
// round), -nemesis.seed (0 draws one; a seed replays the fault schedule,
// though the faults' timing against the traffic, and so the history, still
// varies) and -nemesis.faults (the kinds of fault to draw from).
//
// Partitions are cut in the links, not in the kernel's network, so the
// nemesis needs no root and no network namespaces; nodes never call each
// other, so cutting a node from the database and the store is the
// partition that matters. Clients are never cut from a node.
//
// Not covered: clients cut from a node mid-request (they see what a kill
// shows), clock jumps on one node, and disk faults under SQLite.
package nemesis
