// Package adminwire is the admin listener's JSON, shared by the server
// (adminhttp) and the client the CLI uses (adminclient), so both speak one
// definition of it.
package adminwire

import "encoding/json"

// Node is one registered node.
type Node struct {
	ID       uint32 `json:"id"`
	Epoch    uint64 `json:"epoch"`
	Address  string `json:"address"`
	Slots    uint32 `json:"slots"`
	Assigned uint32 `json:"assignedStreams"`
	// FeatureLevel is the feature level its process declared (1, the base
	// level, when it declared none).
	FeatureLevel uint32 `json:"featureLevel"`
	// State is how the answering node sees it: alive, suspect, fenced (by
	// the cluster) or left (it fenced itself on shutdown); empty when it
	// cannot tell.
	State string `json:"state,omitempty"`
	// HeartbeatAgeMs is for how long its heartbeat has looked the same to
	// the answering node, with State.
	HeartbeatAgeMs *int64 `json:"heartbeatAgeMs,omitempty"`
}

// Cluster is the metadata view as the answering node applied it.
type Cluster struct {
	AppliedIndex uint64 `json:"appliedIndex"`
	Streams      int    `json:"streamCount"`
	Garbage      int    `json:"garbageObjects"`
	LeaseHeld    bool   `json:"leaseHeldHere"`
	LeaseEpoch   uint64 `json:"leaseEpoch,omitempty"`
	// FeatureLevel is the highest level every node reads: what the
	// cluster writes (domain.State.ClusterLevel).
	FeatureLevel uint32 `json:"featureLevel"`
	Nodes        []Node `json:"nodes"`
}

// Stream is one stream's metadata. Its records past CommittedEnd, if any,
// are in its writer's WAL (the tail a client sees on a head).
type Stream struct {
	ID          uint64 `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	CreatedMs   int64  `json:"createdMs"`
	// Owner is the stream's home node (0: none); the stream is open while
	// that node is still registered at OwnerEpoch.
	Owner      uint32 `json:"owner"`
	OwnerEpoch uint64 `json:"ownerEpoch"`
	Open       bool   `json:"open"`
	Epoch      uint64 `json:"streamEpoch"`
	Sealed     bool   `json:"closed"`
	// Start and CommittedEnd bound the offsets in committed data objects.
	Start        uint64 `json:"start"`
	CommittedEnd uint64 `json:"committedEnd"`
	Objects      int    `json:"objects"`
	// Unrecovered counts earlier writers whose WALs a takeover still reads.
	Unrecovered int `json:"unrecoveredWriters"`
	// ForkOf names the stream this one was forked from (ForkOfID: its id,
	// which stays when the source is gone).
	ForkOf      string `json:"forkOf,omitempty"`
	ForkOfID    uint64 `json:"forkOfId,omitempty"`
	ForkAt      uint64 `json:"forkAt,omitempty"`
	Forks       uint32 `json:"forks,omitempty"`
	SoftDeleted bool   `json:"softDeleted,omitempty"`
	TransferTo  uint32 `json:"transferTo,omitempty"`
	// RetentionSec trims records older than that (Pico's --ttl); 0 keeps
	// them. IdleTTLSec expires the stream after that long unused (Durable
	// Streams' Stream-TTL); ExpiresAtMs at that instant.
	RetentionSec uint64 `json:"retentionSec,omitempty"`
	IdleTTLSec   uint64 `json:"idleTtlSec,omitempty"`
	ExpiresAtMs  int64  `json:"expiresAtMs,omitempty"`
}

// SetSlots is the body of POST /admin/nodes/{id}.
type SetSlots struct {
	Slots *uint32 `json:"slots"`
}

// Transfer is the body of POST /admin/transfer: move the stream named
// Stream to node ToNode.
type Transfer struct {
	Stream string  `json:"stream"`
	ToNode *uint32 `json:"toNode"`
}

// Drain is a drain of one node, as POST and GET /admin/nodes/{id}/drain
// answer: the node's slots and the streams whose home it still is, and
// what the drain running (or run last) on the answering node has done.
// The drain is over when RemainingStreams is 0.
type Drain struct {
	Node        uint32 `json:"node"`
	Slots       uint32 `json:"slots"`
	Remaining   int    `json:"remainingStreams"`
	Moved       int    `json:"movedStreams"`
	Running     bool   `json:"running"`
	FailedMoves int    `json:"failedMoves"`
	// LastError is the latest failed move (it is retried), or why the
	// drain stopped with streams left.
	LastError string `json:"lastError,omitempty"`
}

// Error is the body of every admin error response.
type Error struct {
	Error string `json:"error"`
}

// Token is a token record as GET /admin/tokens lists it: never its secret
// or the secret's hash. Scope is the scope's JSON form (domain.Scope).
type Token struct {
	ID          string          `json:"id"`
	Scope       json.RawMessage `json:"scope"`
	Issuer      string          `json:"issuer,omitempty"`
	CreatedAtMs int64           `json:"createdAtMs"`
}

// Tokens is the answer of GET /admin/tokens, in id order.
type Tokens struct {
	Tokens []Token `json:"tokens"`
}

// IssueToken is the body of POST /admin/tokens.
type IssueToken struct {
	ID    string          `json:"id"`
	Scope json.RawMessage `json:"scope"`
}

// IssuedToken is the answer of POST /admin/tokens (201): the wire token,
// shown this once, and the record as stored.
type IssuedToken struct {
	Token
	Wire string `json:"token"`
}
