package subscriptions

import (
	"encoding/json"
	"time"

	"github.com/picomq/pico/ports"
)

// webhookStream is one linked stream in a webhook body or a claim.
type webhookStream struct {
	Path        string `json:"path"`
	LinkType    string `json:"link_type"`
	AckedOffset string `json:"acked_offset"`
	TailOffset  string `json:"tail_offset"`
	HasPending  bool   `json:"has_pending"`
}

// webhookBody is what a webhook delivery posts (and signs).
func (s *Service) webhookBody(r *record, streams []ports.LinkedStream, token string) []byte {
	body, _ := json.Marshal(struct {
		SubscriptionID string          `json:"subscription_id"`
		WakeID         string          `json:"wake_id"`
		Generation     uint64          `json:"generation"`
		Streams        []webhookStream `json:"streams"`
		CallbackURL    string          `json:"callback_url"`
		CallbackToken  string          `json:"callback_token"`
	}{r.ID, r.Wake.ID, r.Generation, s.bodyStreams(streams), r.callbackURL(), token})
	return body
}

func (s *Service) bodyStreams(streams []ports.LinkedStream) []webhookStream {
	out := make([]webhookStream, 0, len(streams))
	for _, ls := range streams {
		out = append(out, webhookStream{Path: ls.Path, LinkType: linkType(ls), AckedOffset: s.cfg.FormatOffset(ls.Acked),
			TailOffset: s.cfg.FormatOffset(ls.Tail), HasPending: ls.Pending})
	}
	return out
}

// linkType is how a stream is linked, as the protocol names it.
func linkType(ls ports.LinkedStream) string {
	if ls.Explicit {
		return "explicit"
	}
	return "glob"
}

// wakeRecord is what a pull-wake appends to its wake stream.
func wakeRecord(r *record, now time.Time) []byte {
	b, _ := json.Marshal(struct {
		Type           string `json:"type"`
		SubscriptionID string `json:"subscription_id"`
		Stream         string `json:"stream"`
		Generation     uint64 `json:"generation"`
		TS             int64  `json:"ts"`
	}{"wake", r.ID, r.Wake.Stream, r.Generation, now.UnixMilli()})
	return b
}
