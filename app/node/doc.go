// Package node runs one PicoMQ node process: it opens the metadata plane,
// registers the node at a fresh epoch (fencing its predecessor), keeps the
// maintenance lease when it can, and reports health and readiness.
//
// # Failover (failover.go)
//
// Every process records a heartbeat every 0.5 s (ports.Heartbeats: an
// upsert of (node, epoch, time) in meta_heartbeat, beside the log so an
// idle cluster adds no log rows; a beat of an older epoch never overwrites
// a newer one). Every process watches the registrations in its view and
// their records, and proposes FenceNode for a registered node whose record
// at its registered epoch has looked the same for --failover-after-sec
// (2 s, at least four beats) of the watcher's good observation time, on its
// own clock:
//
//   - between two good readings only the time from the end of the earlier
//     to the start of the later counts (the database took each snapshot
//     somewhere within its reading), and only if that gap is at most two
//     beats (a longer one means the watcher stalled, and the others may
//     have too);
//   - a round is good if the watcher's own beat and reading each worked
//     (each call times out after a beat) and the reading shows that beat
//     (the database took the write); a bad round counts nothing and breaks
//     the chain of gaps, and after two in a row (an outage) a node needs
//     four beats of fresh silence (quiet beyond the window minus four beats
//     is forgotten). Bad rounds now and then delay a failover; every other
//     round bad prevents it (the logs say the readings are not usable).
//   - only a good round's reading fences, in one proposal given one beat
//     per round (a pending one may still commit; the next round proposes
//     again), so the judge keeps beating and noticing its own fence.
//
// So clock skew, slow or stalled readings, and a database that is down,
// hangs, or loses writes fence no live node, and a newly started watcher
// judges nobody before a whole window. A registration with no record at
// its epoch (a process that died before its first beat) is judged too if
// its node id ever beat and it has slots; a node id that never beat (an
// older version) is never judged, nor is the registration FenceNode leaves
// (no slots, no process). Rolling a node back to a version without
// heartbeats after it has beaten gets it fenced a window after each start:
// set --failover-after-sec 0 on every node first. Versions before this one
// beat every 2.5 s: while one runs in the cluster, set --failover-after-sec
// 10 (four of its beats) on every node.
//
// Every watcher judges, so a dead lease holder is fenced within the window
// rather than once its lease expires (10 s); a watcher waits a beat longer
// for each node of a lower id that looks alive to it, so the first of those
// fences and one death costs one proposal. A killed node's last beat lands
// somewhere in the beat before its death and the judge reads a beat apart,
// so its fence comes 1.5 to 3 s after the death (four or five gaps between
// readings reach the window).
//
// The fenced node's streams then count as closed: the next request for
// one, on any node, opens it there, which fences the old process's WAL and
// recovers every append it acknowledged (package engine). The lease holder
// does not wait for requests: the fence changes the nodes in its view,
// which starts a dead-WAL pass at its next maintenance tick that commits
// those appends, so subscriptions and listings see them. A wrong verdict
// (a node paused, or cut off from the database) costs availability, never
// data: the fenced process can no longer commit, its WAL is fenced by the
// first takeover, and it sees the fence in its view (Node.Fenced), lets
// the lease go and exits, so a supervisor restarts it at a fresh epoch. A
// node that stops cleanly fences itself last (Node.Close leaves the
// cluster): it takes no more placements at once, a stream it could not
// hand back opens elsewhere without waiting for a window, and failover has
// nothing to judge.
//
// # One process per node id (idguard.go)
//
// Two processes given one node id would fence each other in turn under
// their supervisors, so a start checks first. One whose predecessor left
// or was fenced (no record at the registered epoch) registers at once.
// Otherwise the start watches the registered process's record for the
// failover window (at least four beats, the least silence failover takes
// for death): if it moves, the start fails with ErrNodeIDInUse and names
// the live process; if not, that process is gone, or past its tenure, and
// this one takes over. A restart at the same address waits too: a paused
// or cut-off predecessor still answers the clients that reach it from its
// own state until its tenure ends, and must not see its streams taken
// first. So a node restarted after a crash is ready a window after its
// last beat at the earliest; with failover off it registers at once.
//
// # Slots (slots.go)
//
// SetSlots proposes a SetSlots command (pico admin set-slots). Slots are
// recorded, not yet used to place new streams, but a drain moves streams
// by them (below); giving slots to a registration no process runs is
// refused, as the failover check would fence it again.
//
// # Drains (drain.go)
//
// DrainNode (pico admin drain, POST /admin/nodes/{id}/drain), asked of
// any node, sets a node's slots to 0, so placement never picks it, and
// moves every stream whose home it is in the background on the node
// asked: each to the node placement picks as the view stands
// (domain.State.Place, or the target of a transfer already pending),
// through the stream's writer wherever it runs (streams.Service.Transfer),
// until the target has opened it. DrainParallel moves run at once, so the
// targets' shares differ from placement's by the moves in flight at most.
// A drain works in passes over the streams still homed on the node: a
// failed move is logged, counted and retried in the next pass, and the
// drain stops once the node is home to none, after five passes in a row
// that moved nothing, or when no node takes placements (ErrNoPlacement,
// which a drain with streams left refuses up front). The list comes from
// the view, never from the drain's own memory, so asking again resumes a
// drain that stopped, on any node; DrainProgress shows the streams left
// (domain.Node.Assigned) and what this process's drain has done.
//
// DrainSelf is the same drain run by the node on itself, as a stop begins
// (serve --shutdown-transfer): its streams change hands while it still
// serves them, up to the caller's deadline. What it has not moved by then
// the normal stop hands back (Close).
package node
