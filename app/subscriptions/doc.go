// Package subscriptions is the durable subscription service
// (ports.Subscriptions): cursors over sets of streams that wake a worker
// when a linked stream's tail passes its cursor, by a signed webhook or by
// a wake record appended to a stream workers read and claim.
//
// All state lives in the metadata registry, one entry per subscription,
// replaced with compare-and-set on the entry's revision: every node can
// serve every request, and of two racing updates (two workers, a request
// and the delivery loop) one wins and the other re-reads and decides again.
// Wakes are fenced by generation, wake id and token.
//
// The Durable Streams listener serves it under <root>/__ds/. A delivery
// loop on the maintenance lease holder compares linked streams' tails with
// their acknowledged offsets and wakes a worker: a webhook POST signed
// with the cluster's ed25519 key (stored once in the registry, published
// as JWKS), or a wake record appended to a wake stream for pull workers,
// who claim, acknowledge and release under generation, wake id and token
// fencing, with leases that re-wake on expiry.
package subscriptions
