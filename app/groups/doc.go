// Package groups is the consumer group service (ports.Groups), with the
// original Pico protocol's semantics: members join with the streams they
// subscribe to, a rebalance gives each stream to one subscriber under a
// new generation, sessions are leased and renewed by heartbeats, and a
// stale member is fenced by generation and instance id.
//
// A group is one registry entry (domain.GroupKey) holding its membership
// and its committed offsets, replaced by compare-and-set on the entry's
// revision: every node serves every group, and of two racing updates one
// wins and the other reads again and decides again. The rules live in
// domain (ConsumerGroup); this package reads, applies and writes them.
//
// A join blocks until its rebalance settles: when every member has joined
// (the last join settles it) or at the rebalance deadline, which the first
// waiter past it settles by proposing the group without the members that
// did not join. Waiters poll the view, catching up with the log so a join
// on another node is seen. Sessions expire lazily: every update drops the
// members whose lease ran out.
//
// Each heartbeat is a metadata write, so a group's write load is its
// members over a third of their session timeout.
package groups
