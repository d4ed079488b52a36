// Package engine is the stream engine on object storage: the node's
// write-ahead log of object-store PUTs with adaptive group commit, and its
// fencing and recovery.
package engine
