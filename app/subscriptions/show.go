package subscriptions

import (
	"context"
	"net/url"
	"time"

	"github.com/picomq/pico/ports"
)

// show is a record as the port presents it, with current tails.
func (s *Service) show(ctx context.Context, r *record) (ports.Subscription, error) {
	o, err := s.observe(ctx, r)
	if err != nil {
		return ports.Subscription{}, err
	}
	sub := ports.Subscription{ID: r.ID, Type: r.Type, Pattern: r.Pattern, Streams: o.streams, WebhookURL: r.WebhookURL,
		WakeStream: r.WakeStream, LeaseTTL: time.Duration(r.LeaseTTLMs) * time.Millisecond, CreatedMs: r.CreatedMs,
		Failed: r.Failed, Description: r.Description}
	if r.Type == ports.WebhookSubscription {
		key, err := s.activeKey(ctx)
		if err != nil {
			return ports.Subscription{}, err
		}
		sub.Signing = &ports.WebhookSigning{Alg: "ed25519", KeyID: key.kid, JWKSURL: r.ControlURL + "jwks.json"}
	}
	return sub, nil
}

// callbackURL is where a webhook worker reports on its wake.
func (r *record) callbackURL() string {
	return r.ControlURL + "subscriptions/" + url.PathEscape(r.ID) + "/callback"
}
