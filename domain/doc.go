// Package domain is the pure, deterministic core of PicoMQ: the metadata
// command set and its versioned binary codec, the cluster State, the total
// Apply function, invariants, placement and the snapshot encoding.
//
// Nothing here reads a clock, draws random numbers, starts goroutines or does
// I/O: time arrives inside commands, stamped by the proposer. Every replica
// that applies the same rows ends in the same State, byte for byte, so Apply
// never fails; a stale or invalid command yields a rejection Result and leaves
// the state unchanged.
package domain
