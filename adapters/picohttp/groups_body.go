package picohttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
)

// maxGroupBody bounds a group request's JSON body: a join's subscription
// of a thousand names, a commit of a few thousand offsets.
const maxGroupBody = 1 << 20

// joinBody is the body of POST /_groups/{g}/members.
type joinBody struct {
	Subscription       *[]string `json:"subscription"`
	MemberID           *string   `json:"memberId"`
	InstanceID         *string   `json:"instanceId"`
	ClientID           *string   `json:"clientId"`
	SessionTimeoutMs   *int32    `json:"sessionTimeoutMs"`
	RebalanceTimeoutMs *int32    `json:"rebalanceTimeoutMs"`
}

// heartbeatBody is the body of POST /_groups/{g}/members/{m}/heartbeat.
type heartbeatBody struct {
	Generation *int32  `json:"generation"`
	InstanceID *string `json:"instanceId"`
}

// commitBody is the body of PUT /_groups/{g}/offsets.
type commitBody struct {
	Offsets *map[string]struct {
		Position *uint64 `json:"position"`
		Metadata *string `json:"metadata"`
	} `json:"offsets"`
	MemberID   *string `json:"memberId"`
	Generation *int32  `json:"generation"`
	InstanceID *string `json:"instanceId"`
}

// decodeGroupBody reads one JSON object of at most maxGroupBody bytes
// into v; an unknown member, a value of the wrong type or trailing data
// is a 400 that says so.
func decodeGroupBody(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, maxGroupBody+1))
	if err != nil {
		return badRequest("reading the body: %v", err)
	}
	if len(body) > maxGroupBody {
		return &http.MaxBytesError{Limit: maxGroupBody}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("null")) {
		return badRequest("the body must be a JSON object")
	}
	if err := dec.Decode(v); err != nil {
		return badRequest("the body must be a JSON object of this request's members: %v", err)
	}
	if dec.More() {
		return badRequest("the body holds more than one JSON value")
	}
	return nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// decodeJoin returns the join a body asks for.
func decodeJoin(r io.Reader) (domain.JoinRequest, error) {
	var b joinBody
	if err := decodeGroupBody(r, &b); err != nil {
		return domain.JoinRequest{}, err
	}
	if b.Subscription == nil {
		return domain.JoinRequest{}, badRequest("subscription is required: the streams the member reads")
	}
	req := domain.JoinRequest{Subscription: *b.Subscription, MemberID: str(b.MemberID), InstanceID: str(b.InstanceID), ClientID: str(b.ClientID)}
	if b.SessionTimeoutMs != nil {
		req.SessionTimeoutMs = int64(*b.SessionTimeoutMs)
		if req.SessionTimeoutMs == 0 {
			return req, badRequest("sessionTimeoutMs must be %d to %d", domain.MinSessionTimeoutMs, domain.MaxSessionTimeoutMs)
		}
	}
	if b.RebalanceTimeoutMs != nil {
		req.RebalanceTimeoutMs = int64(*b.RebalanceTimeoutMs)
	}
	_, err := domain.CheckJoin(req)
	if err != nil {
		return req, badRequest("%v", err)
	}
	return req, nil
}

// decodeHeartbeat returns a heartbeat's generation and instance id.
func decodeHeartbeat(r io.Reader) (int32, string, error) {
	var b heartbeatBody
	if err := decodeGroupBody(r, &b); err != nil {
		return 0, "", err
	}
	if b.Generation == nil {
		return 0, "", badRequest("generation is required")
	}
	return *b.Generation, str(b.InstanceID), nil
}

// decodeCommit returns the offsets a commit records and its fence (nil:
// unfenced).
func decodeCommit(r io.Reader) (map[string]domain.CommittedOffset, *domain.MemberFence, error) {
	var b commitBody
	if err := decodeGroupBody(r, &b); err != nil {
		return nil, nil, err
	}
	if b.Offsets == nil {
		return nil, nil, badRequest("offsets must be an object keyed by stream")
	}
	offsets := make(map[string]domain.CommittedOffset, len(*b.Offsets))
	for stream, o := range *b.Offsets {
		if o.Position == nil {
			return nil, nil, badRequest("offset of %s: position must be a non-negative integer", headerval.Clip(stream))
		}
		c := domain.CommittedOffset{Position: *o.Position, Metadata: o.Metadata}
		if err := domain.CheckOffset(stream, c); err != nil {
			return nil, nil, badRequest("%v", err)
		}
		offsets[stream] = c
	}
	switch {
	case b.MemberID == nil && b.Generation == nil:
		if b.InstanceID != nil {
			return nil, nil, badRequest("instanceId goes with memberId and generation")
		}
		return offsets, nil, nil
	case b.MemberID == nil || b.Generation == nil:
		return nil, nil, badRequest("memberId and generation go together")
	}
	return offsets, &domain.MemberFence{MemberID: *b.MemberID, InstanceID: str(b.InstanceID), Generation: *b.Generation}, nil
}
