package ports

import (
	"fmt"

	"github.com/picomq/pico/domain"
)

// AppendOutcome turns the write rules' verdict on req into the service's
// answer: a result when the request is written or is a duplicate, else the
// *StreamError of its kind, with the verdict attached. An Unfit verdict
// has its reason with the caller, which passes it as unfit.
func AppendOutcome(req AppendRequest, v domain.Verdict, unfit error) (AppendResult, error) {
	switch v.Outcome {
	case domain.Accepted, domain.Duplicate:
		return AppendResult{First: v.First, Next: v.Next, Tail: v.Tail, TimestampMs: v.TimestampMs,
			Duplicate: v.Outcome == domain.Duplicate, ProducerSeq: v.ProducerSeq, Closed: v.Closed,
			RepeatsClose: v.RepeatsClose}, nil
	case domain.Unfit:
		return AppendResult{}, unfit
	}
	se, verdict := refusal(req, v), v // a copy, so that only a refusal allocates it
	se.Write = &verdict
	return AppendResult{}, se
}

// refusal is the error of a refused verdict, with the offsets and flags
// each kind reports.
func refusal(req AppendRequest, v domain.Verdict) *StreamError {
	switch v.Outcome {
	case domain.StaleEpoch:
		return Errorf(ErrProducerFenced, "producer epoch is stale: the current epoch is %d", v.Epoch)
	case domain.ProducerGap:
		return Errorf(ErrProducerGap, "producer sequence gap: expected %d, received %d", v.Expected, v.Received)
	case domain.MatchFailed:
		return &StreamError{Kind: ErrMatchFailed, Next: v.Tail, HasNext: true,
			Message: fmt.Sprintf("match failed: expected tail %d, actual %d", v.Expected, v.Tail)}
	case domain.WriterSeqBehind:
		return &StreamError{Kind: ErrWriterSeq, Next: v.Tail, HasNext: true,
			Message: fmt.Sprintf("writer sequence %q is not above the last accepted %q", req.WriterSeq, v.LastWriterSeq)}
	case domain.StreamClosed:
		return &StreamError{Kind: ErrStreamClosed, Message: "stream is closed", Next: v.Tail, HasNext: true, Closed: true}
	}
	return Errorf(ErrUnavailable, "append judged %v", v.Outcome)
}

// Unfit is the fault of a request whose records a stream of cfg cannot
// take, whichever protocol wrote them: another content type (a stream's
// never changes), or, on a JSON stream, a record that is not one JSON
// value in UTF-8 (domain.ValidJSON), so that a Pico append to a JSON
// stream leaves nothing a Durable Streams reader cannot parse.
func Unfit(cfg domain.StreamConfig, req AppendRequest) error {
	if req.ContentType != "" && !domain.SameContentType(req.ContentType, cfg.ContentType) {
		return Errorf(ErrStreamConflict, "Content-Type %.100s does not match the stream's %s", req.ContentType, cfg.ContentType)
	}
	if !domain.IsJSON(cfg.ContentType) {
		return nil
	}
	for i, r := range req.Records {
		if !domain.ValidJSON(r.Body) {
			return Errorf(ErrBadRequest, "record %d is not one JSON value in UTF-8, as every record of a %s stream is", i, cfg.ContentType)
		}
	}
	return nil
}
