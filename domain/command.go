package domain

// Code is a command's fixed wire code. Codes are append-only: never reuse or
// renumber one (testdata/codes.txt is checked against this table).
type Code uint16

// Command codes.
const (
	CodeRegisterNode       Code = 1
	CodeSetSlots           Code = 2
	CodeCreateStream       Code = 3
	CodeOpenStream         Code = 4
	CodeCloseStream        Code = 5
	CodeSetStreamMeta      Code = 6
	CodeTrimStream         Code = 7
	CodeDeleteStream       Code = 8
	CodeReserveObjects     Code = 9
	CodeCommitObjects      Code = 10
	CodeCompactObjects     Code = 11
	CodeStartTransfer      Code = 12
	CodeCompleteTransfer   Code = 13
	CodeExpireReservations Code = 14
	CodeDestroyObjects     Code = 15
	CodePutKV              Code = 16
	CodePutKVIf            Code = 17
	CodeDeleteKV           Code = 18
	CodeDeleteKVIf         Code = 19
	CodeFenceNode          Code = 20
	CodeSealStream         Code = 21
	CodeCreateFork         Code = 22
	CodeRecoveredStream    Code = 23
	CodeSealStreamBy       Code = 24
	CodePlaceStream        Code = 25
)

// Command is one metadata change. Every command carries all the inputs Apply
// needs, including time, stamped by the proposer.
type Command interface {
	Code() Code
	encode(e *encoder)
	decode(d *decoder)
}

// Proposer identifies the process that proposed a command. Apply rejects a
// command whose proposer is not registered at exactly this epoch
// (ResultNodeFenced): a restarted node's predecessor can change nothing.
type Proposer struct {
	Node  NodeID
	Epoch uint64
}

// RegisterNode records a node process. Effect: a higher Epoch than the
// recorded one replaces address, slots and epoch (fencing the previous
// process); the same epoch with the same fields is ResultRedundant; anything
// else is ResultNodeFenced. Result value: the epoch.
type RegisterNode struct {
	Node    NodeID
	Epoch   uint64
	Address string
	Slots   uint32
	NowMs   int64
}

// SetSlots changes a registered node's placement weight (0 excludes it from
// new placements). Result value: the new slots.
type SetSlots struct {
	By    Proposer
	Node  NodeID
	Slots uint32
}

// CreateStream creates a named stream with its configuration. With Open it is
// opened on the proposer at epoch 1 in the same step, so a stream never exists
// half-created. A taken name is ResultExists with the existing id. Result
// value: the new stream id.
type CreateStream struct {
	By    Proposer
	Name  string
	Meta  []byte
	Open  bool
	NowMs int64
}

// PlaceStream creates a named stream, as CreateStream with Open, on the node
// placement picks when it applies (State.Place: a burst of creates spreads,
// each seeing the ones before it), or on the proposer when no node takes
// placements. The stream is opened on the placed node at its registered
// epoch and epoch 1, as if that node had created it. Content says the
// create carries initial records or a close: placed elsewhere, the stream
// awaits them (Stream.AwaitsCreate) from the create, redirected to its
// node. A taken name is ResultExists with the existing id. Result value:
// the new stream id.
type PlaceStream struct {
	By      Proposer
	Name    string
	Meta    []byte
	Content bool
	NowMs   int64
}

// CreateFork creates a named stream that inherits the offsets below At from
// stream Source: reads below At are served from the source (and its own
// sources), appends continue at At. The source must hold committed records
// up to At (At <= its End) and not be soft-deleted; it counts the fork and
// cannot be trimmed or fully deleted while forks remain. The fork is opened
// on the proposer at epoch 1. Result value: the new stream id; a taken name
// is ResultExists with the existing id.
type CreateFork struct {
	By     Proposer
	Name   string
	Meta   []byte
	Source uint64
	At     uint64
	NowMs  int64
}

// OpenStream makes the proposer the stream's writer at Epoch, which must be
// above the current epoch: this is the fence. The stream must not be open on
// another live process, and a pending transfer reserves it for its target.
// Opening again at the current epoch by the same process is ResultRedundant.
// A previous writer that never closed the stream joins Stream.Unrecovered.
// Result value: the epoch.
type OpenStream struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
}

// CloseStream releases the proposer's ownership at Epoch. Idempotent.
type CloseStream struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
}

// SealStream closes a stream for appends for good (records already written
// stay readable; commits of them still land). Only its open writer at Epoch
// may seal it; sealing a sealed stream is ResultRedundant. Result value: the
// epoch.
type SealStream struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
}

// SealStreamBy is SealStream naming the request that sealed the stream, so
// that whoever writes the stream later can tell a retry of that request
// from a retry of an earlier one: Closer is its producer stamp, nil for a
// request without one. A seal recorded by SealStream names no request.
type SealStreamBy struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
	Closer *ProducerStamp
}

// RecoveredStream records that the stream's writer at Epoch has made every
// record it recovered from earlier writers durable in its own WAL: their
// WALs need not be read again (Stream.Unrecovered is emptied). Only the open
// writer at Epoch may propose it; with nothing to forget it is
// ResultRedundant. Result value: the epoch.
type RecoveredStream struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
}

// SetStreamMeta replaces the stream's configuration; only its open writer at
// Epoch may do so.
type SetStreamMeta struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
	Meta   []byte
}

// TrimStream raises the stream's start offset to Start (<= End); objects that
// lie wholly below it are marked as garbage. A lower or equal Start is
// ResultRedundant. KeepLast keeps the object holding the stream's last
// record even when Start reaches End: its section carries the producer
// state and writer sequence a takeover restores. Writers set it when the
// stream has such state; trims logged before the field existed decode with
// it false and keep their effect.
type TrimStream struct {
	By       Proposer
	Stream   uint64
	Epoch    uint64
	Start    uint64
	KeepLast bool
}

// DeleteStream removes a stream and its name (reusable at once) and marks its
// objects. Epoch must equal the stream's epoch, so a stream reopened since the
// caller looked is not deleted; an open stream may only be deleted by its
// writer.
type DeleteStream struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
}

// ReserveObjects reserves Count (1..MaxReserve) consecutive object ids for the
// proposer until NowMs+TTLMs; ids are reserved before any bytes are written so
// that an abandoned upload is always found and collected. Result value: the
// first id.
type ReserveObjects struct {
	By    Proposer
	Count uint32
	TTLMs int64
	NowMs int64
}

// ObjectSpec describes an uploaded object to commit.
type ObjectSpec struct {
	ID     uint64
	Size   uint64
	Ranges []Range
}

// CommitObjects commits uploaded objects atomically: every range must be
// written by the stream's owner at the stream's epoch and start exactly at
// the stream's end, which it advances. Objects must be reserved by the
// proposer; all of them already committed is ResultRedundant. Ranges of
// streams deleted meanwhile are dropped.
type CommitObjects struct {
	By      Proposer
	Objects []ObjectSpec
	NowMs   int64
}

// CompactObjects replaces the objects holding a contiguous run of one
// stream's ranges with a single object covering exactly that run. The
// replaced ranges are unindexed and objects left without live ranges are
// marked as garbage.
type CompactObjects struct {
	By       Proposer
	Object   ObjectSpec
	Replaces []uint64
	NowMs    int64
}

// StartTransfer records that stream should move to node To. The same pending
// transfer again is ResultRedundant; a different one is ResultConflict. An
// open stream moves only at its writer's word (else ResultNotClosed). A
// transfer whose target has no slots has lapsed (State.PendingTransfer):
// a new one replaces it.
type StartTransfer struct {
	By     Proposer
	Stream uint64
	To     NodeID
}

// CompleteTransfer hands the closed stream (at Epoch) to the transfer target,
// which then opens it at Epoch+1; until then no process of the target holds
// it (OwnerEpoch 0). A previous writer that never closed the stream joins
// Stream.Unrecovered. No pending transfer is ResultRedundant.
type CompleteTransfer struct {
	By     Proposer
	Stream uint64
	Epoch  uint64
}

// ExpireReservations drops reservations whose deadline is <= NowMs and marks
// their ids as garbage (bytes may have been written). Result value: count.
type ExpireReservations struct {
	By    Proposer
	NowMs int64
}

// DestroyObjects forgets garbage ids whose bytes were deleted. Unknown ids are
// ignored. Result value: the number forgotten.
type DestroyObjects struct {
	By  Proposer
	IDs []uint64
}

// PutKV sets a key. Result value: the entry's new revision.
type PutKV struct {
	By    Proposer
	Space KVSpace
	Key   string
	Value []byte
}

// PutKVIf sets a key only if its revision is IfRev (0: only if absent);
// otherwise ResultRevMismatch with the current revision.
type PutKVIf struct {
	By    Proposer
	Space KVSpace
	Key   string
	Value []byte
	IfRev uint64
}

// DeleteKV removes a key. An absent key is ResultRedundant.
type DeleteKV struct {
	By    Proposer
	Space KVSpace
	Key   string
}

// DeleteKVIf removes a key only if its revision is IfRev; otherwise
// ResultRevMismatch (ResultNotFound if absent).
type DeleteKVIf struct {
	By    Proposer
	Space KVSpace
	Key   string
	IfRev uint64
}

// FenceNode retires node process (Node, Epoch) without its cooperation, for
// failover from a node that is dead or unreachable: the node's recorded epoch
// moves to Epoch+1, so that process's commands are node-fenced from now on
// and every stream it held open counts as closed (any node may open them at
// the next stream epoch), and its slots drop to 0 so nothing new is placed
// on it. The node itself rejoins by registering at a higher epoch. A node already past Epoch is ResultRedundant. Result value: the new
// recorded epoch.
type FenceNode struct {
	By    Proposer
	Node  NodeID
	Epoch uint64
}

// Code methods.
func (RegisterNode) Code() Code       { return CodeRegisterNode }
func (SetSlots) Code() Code           { return CodeSetSlots }
func (CreateStream) Code() Code       { return CodeCreateStream }
func (OpenStream) Code() Code         { return CodeOpenStream }
func (CloseStream) Code() Code        { return CodeCloseStream }
func (SetStreamMeta) Code() Code      { return CodeSetStreamMeta }
func (TrimStream) Code() Code         { return CodeTrimStream }
func (DeleteStream) Code() Code       { return CodeDeleteStream }
func (ReserveObjects) Code() Code     { return CodeReserveObjects }
func (CommitObjects) Code() Code      { return CodeCommitObjects }
func (CompactObjects) Code() Code     { return CodeCompactObjects }
func (StartTransfer) Code() Code      { return CodeStartTransfer }
func (CompleteTransfer) Code() Code   { return CodeCompleteTransfer }
func (ExpireReservations) Code() Code { return CodeExpireReservations }
func (DestroyObjects) Code() Code     { return CodeDestroyObjects }
func (PutKV) Code() Code              { return CodePutKV }
func (PutKVIf) Code() Code            { return CodePutKVIf }
func (DeleteKV) Code() Code           { return CodeDeleteKV }
func (DeleteKVIf) Code() Code         { return CodeDeleteKVIf }
func (FenceNode) Code() Code          { return CodeFenceNode }
func (SealStream) Code() Code         { return CodeSealStream }
func (CreateFork) Code() Code         { return CodeCreateFork }
func (RecoveredStream) Code() Code    { return CodeRecoveredStream }
func (SealStreamBy) Code() Code       { return CodeSealStreamBy }
func (PlaceStream) Code() Code        { return CodePlaceStream }
