// Package domain is the pure, deterministic core of PicoMQ: the metadata
// command set and its versioned binary codec, the cluster State, the total
// Apply function, invariants, placement and the snapshot encoding.
//
// Nothing here reads a clock, draws random numbers, starts goroutines or does
// I/O: time arrives inside commands, stamped by the proposer. Every replica
// that applies the same rows ends in the same State, byte for byte, so Apply
// never fails; a stale or invalid command yields a rejection Result and leaves
// the state unchanged.
//
// # State
//
// State is the whole cluster metadata: nodes, streams (by id and by name),
// committed objects with per-stream offset indexes, object-id
// reservations, objects awaiting deletion (garbage), and a key-value store
// with two spaces (registry, tokens). Two indexes derived from the streams
// (index.go: the node processes whose WALs they name, the streams whose
// configuration can expire them) let maintenance passes visit what they
// look for instead of every stream; snapshots do not hold them, decoding
// rebuilds them. Every map is a persistent treap
// (pmap.go) whose priorities are a hash of the key, so every replica builds
// the same tree and an update copies only one path. Copying the State
// struct is therefore a complete, immutable view; publishing one per
// applied row costs nothing proportional to the number of streams. One
// million idle streams take about 230 bytes of heap each.
//
// Apply(cmd) Result is total. It works on a copy and commits it only on
// ResultOK; every other result (redundant, node-fenced, stale-epoch,
// not-found, exists, not-closed, conflict, invalid, rev-mismatch, gap)
// leaves the state untouched apart from the Applied counter. No command can
// make replay fail, so every replica ends byte-identical (Hash is the
// SHA-256 of the deterministic snapshot encoding). CheckInvariants states
// what always holds: node assignment counts, the name and stream indexes,
// contiguous object ranges per stream ending at the stream's end,
// live-range counts of objects, id bounds. Tests check it after every
// step; snapshot decoding checks it before a state is used.
//
// # Commands
//
// Codes are append-only (testdata/codes.txt, golden encodings under
// testdata/golden/). Every command except RegisterNode carries its proposer
// (node, epoch) and is rejected unless that node is registered at exactly
// that epoch.
//
//	 1 RegisterNode       a higher epoch replaces the node's process (fences
//	                      the old one)
//	 2 SetSlots           placement weight; 0 takes no new streams
//	 3 CreateStream       name + opaque config; optionally opened on the
//	                      proposer at epoch 1, in the same step
//	 4 OpenStream         writer at a higher stream epoch: the fence
//	 5 CloseStream        writer releases the stream at its epoch
//	 6 SetStreamMeta      writer replaces the config
//	 7 TrimStream         raise the start offset; objects wholly below become
//	                      garbage, except, with KeepLast (set when the stream
//	                      has producer state or a writer sequence), the
//	                      stream's last one: its section holds the state a
//	                      takeover restores, and it stays until the stream
//	                      is appended to and trimmed again, or deleted
//	 8 DeleteStream       remove stream and name (reusable at once); its
//	                      objects become garbage
//	 9 ReserveObjects     reserve object ids before uploading, with a deadline
//	10 CommitObjects      commit uploaded objects; every range must be the
//	                      writer's, at the stream epoch, starting at the
//	                      stream's end, which advances for all streams at once
//	11 CompactObjects     replace a stream's tiled objects by one
//	12 StartTransfer      record a pending move to another node
//	13 CompleteTransfer   hand the closed stream to the target
//	14 ExpireReservations expired reservations become garbage (bytes may
//	                      exist)
//	15 DestroyObjects     forget garbage whose bytes were deleted
//	16-19 PutKV, PutKVIf, DeleteKV, DeleteKVIf
//	                      key-value writes; the If forms compare the entry's
//	                      revision
//	20 FenceNode          retire a dead or unreachable node process: its
//	                      epoch moves on, its streams count as closed
//	21 SealStream         writer closes the stream for appends for good
//	                      (records stay readable)
//	22 CreateFork         a stream that reads its source's records below a
//	                      fork point and continues on its own; the source is
//	                      pinned (no trim; delete only soft-deletes it until
//	                      its last fork goes, then the soft-deleted chain is
//	                      removed)
//	23 RecoveredStream    writer records that what it recovered from earlier
//	                      writers is durable: they leave the stream's
//	                      Unrecovered list, which OpenStream and
//	                      CompleteTransfer extend with a writer that never
//	                      closed the stream
//	24 SealStreamBy       SealStream that names the request that sealed the
//	                      stream (its producer stamp, or none) in the
//	                      stream's Closer, so that a later writer tells a
//	                      retry of it from a retry of an earlier request;
//	                      the engine records seals with it
//
//	25 PlaceStream        CreateStream on the node placement picks as it
//	                      applies (State.Place); a create with content
//	                      placed elsewhere awaits it there (AwaitsCreate)
//
// A log row is version, count, (code, length, body)* with unsigned
// varints; decoding is bounded by the bytes present and fuzzed. A code or
// snapshot version a node does not know halts its plane (/ready fails)
// rather than be guessed at.
//
// # Feature levels
//
// A Level names the command codes and snapshot version a build reads
// (level.go). Each process declares its level in the registry when it
// registers; State.ClusterLevel is the lowest declared by a registered
// process, a process of an older build counting as LevelBase. A node writes
// what a level adds (a command, a snapshot version, a WAL frame flag) only
// while the cluster is at that level, so a rolling upgrade works node by
// node: the last node upgraded lifts the cluster to the new level. A node
// that finds the log already past its level stops with a message naming
// the level it needs.
//
// # Fencing
//
// Two epochs fence stale writers:
//
//   - Node epoch. A process registers at a fresh epoch (wall-clock ms, or
//     one above the registered epoch if the clock is behind). Every command
//     it proposes carries it; once a newer process of the same node id
//     registers, everything the old one proposes is node-fenced. A restart
//     also implicitly closes the streams the old process had open: a
//     stream counts as open only while its owner is still registered at
//     the epoch that opened it.
//   - Stream epoch. OpenStream must name a higher epoch than the stream's;
//     trims, config changes and object commits must name the current epoch
//     and come from the process that opened it.
//
// Fencing in the object store itself (a paused old owner must not
// acknowledge writes) is the WAL's: see package app/wal, and app/engine
// for when a new writer fences its predecessors.
//
// # Auth rules
//
// The auth rules are domain logic (auth_*.go): scopes, their strict JSON,
// narrowing, auto-prefixed names, the wire token and the stored record
// (the secret's SHA-256, never the secret). Scope.Check decides an
// operation, audience and name at a given time.
package domain
