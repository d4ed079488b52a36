package domain

import (
	"fmt"
	"strings"
)

// ResultCode says how Apply treated a command. Codes are stable (they cross
// the wire between app and adapters) and append-only.
type ResultCode uint8

// Result codes. Only ResultOK changes the state.
const (
	ResultOK ResultCode = iota
	// ResultRedundant: the command's effect is already in place; callers that
	// retry treat it as success.
	ResultRedundant
	// ResultNodeFenced: the proposer is not registered at its epoch (it was
	// restarted or never registered); it must stop.
	ResultNodeFenced
	// ResultStaleEpoch: the stream epoch in the command is not the current one,
	// or the proposer is not the stream's writer at it.
	ResultStaleEpoch
	ResultNotFound
	ResultExists
	// ResultNotClosed: the stream is open on another live process.
	ResultNotClosed
	// ResultConflict: a different transfer is pending, or the stream is
	// reserved for a transfer target.
	ResultConflict
	ResultInvalid
	// ResultRevMismatch: a conditional key-value write saw another revision.
	ResultRevMismatch
	// ResultGap: a committed range does not start at the stream's end.
	ResultGap
)

var resultNames = [...]string{"ok", "redundant", "node-fenced", "stale-epoch", "not-found",
	"exists", "not-closed", "conflict", "invalid", "rev-mismatch", "gap"}

func (c ResultCode) String() string {
	if int(c) < len(resultNames) {
		return resultNames[c]
	}
	return fmt.Sprintf("result(%d)", c)
}

// Result is what Apply returns for one command. Value carries the
// command-specific output (an id, epoch, count or revision), Reason a short
// deterministic explanation of a rejection.
type Result struct {
	Code   ResultCode
	Value  uint64
	Reason string
}

// OK reports whether the command took effect now or had already (redundant).
func (r Result) OK() bool { return r.Code == ResultOK || r.Code == ResultRedundant }

// String is the result as errors and logs show it to an operator: the
// reason of a rejection, else its code in words (the value is internal).
func (r Result) String() string {
	if r.Reason != "" {
		return r.Reason
	}
	return strings.ReplaceAll(r.Code.String(), "-", " ")
}

func ok(v uint64) Result        { return Result{Code: ResultOK, Value: v} }
func redundant(v uint64) Result { return Result{Code: ResultRedundant, Value: v} }

func reject(code ResultCode, format string, args ...any) Result {
	return Result{Code: code, Reason: fmt.Sprintf(format, args...)}
}
