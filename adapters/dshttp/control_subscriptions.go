package dshttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/ports"
)

// createBody is a subscription create (PUT) as sent.
type createBody struct {
	Type    string   `json:"type"`
	Pattern string   `json:"pattern"`
	Streams []string `json:"streams"`
	Webhook *struct {
		URL string `json:"url"`
	} `json:"webhook"`
	WakeStream  string       `json:"wake_stream"`
	LeaseTTLMs  *json.Number `json:"lease_ttl_ms"`
	Description string       `json:"description"`
}

func (b *createBody) spec(control string) (ports.SubscriptionSpec, error) {
	spec := ports.SubscriptionSpec{Type: ports.SubscriptionType(b.Type), Pattern: b.Pattern, Streams: b.Streams,
		WakeStream: b.WakeStream, Description: b.Description, ControlURL: control}
	if b.Webhook != nil {
		spec.WebhookURL = b.Webhook.URL
	}
	if b.LeaseTTLMs != nil {
		ms, err := strconv.ParseInt(b.LeaseTTLMs.String(), 10, 64)
		if err != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
			return spec, controlError(http.StatusBadRequest, "INVALID_REQUEST", "lease_ttl_ms must be a whole number of milliseconds")
		}
		spec.LeaseTTL = time.Duration(ms) * time.Millisecond
	}
	return spec, nil
}

func (s *server) putSubscription(c echo.Context, ref ports.SubscriptionRef) error {
	raw, err := readControlBody(c)
	if err != nil {
		return err
	}
	var body createBody
	if err := decodeControlJSON(raw, &body); err != nil {
		return err
	}
	spec, err := body.spec(controlURL(c.Request(), ref.Root))
	if err != nil {
		return err
	}
	sub, created, err := s.cfg.Subscriptions.Put(c.Request().Context(), ref, spec)
	if err != nil {
		return s.subscriptionFailure(c, err)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(c, status, jsonType, subscriptionJSON(sub))
}

func (s *server) getSubscription(c echo.Context, ref ports.SubscriptionRef) error {
	sub, err := s.cfg.Subscriptions.Get(c.Request().Context(), ref)
	if err != nil {
		return s.subscriptionFailure(c, err)
	}
	return writeJSON(c, http.StatusOK, jsonType, subscriptionJSON(sub))
}

func (s *server) deleteSubscription(c echo.Context, ref ports.SubscriptionRef) error {
	if err := s.cfg.Subscriptions.Delete(c.Request().Context(), ref); err != nil {
		return s.subscriptionFailure(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *server) addStreams(c echo.Context, ref ports.SubscriptionRef) error {
	raw, err := readControlBody(c)
	if err != nil {
		return err
	}
	var body struct {
		Streams []string `json:"streams"`
	}
	if err := decodeControlJSON(raw, &body); err != nil {
		return err
	}
	if len(body.Streams) == 0 {
		return controlError(http.StatusBadRequest, "INVALID_REQUEST", "streams must be a non-empty array of paths")
	}
	if err := s.cfg.Subscriptions.AddStreams(c.Request().Context(), ref, body.Streams); err != nil {
		return s.subscriptionFailure(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *server) removeStream(c echo.Context, ref ports.SubscriptionRef, path string) error {
	if err := s.cfg.Subscriptions.RemoveStream(c.Request().Context(), ref, path); err != nil {
		return s.subscriptionFailure(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// jwks publishes the webhook signing keys; receivers may cache them.
func (s *server) jwks(c echo.Context) error {
	keys, err := s.cfg.Subscriptions.JWKS(c.Request().Context())
	if err != nil {
		return s.subscriptionFailure(c, err)
	}
	out := make([]map[string]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]string{"kty": k.Kty, "crv": k.Crv, "kid": k.Kid, "use": k.Use, "alg": k.Alg, "x": k.X})
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=300")
	return writeJSON(c, http.StatusOK, jwksType, map[string]any{"keys": out})
}

type linkJSON struct {
	Path        string `json:"path"`
	LinkType    string `json:"link_type"`
	AckedOffset string `json:"acked_offset"`
}

type subscriptionView struct {
	ID             string       `json:"id"`
	SubscriptionID string       `json:"subscription_id"`
	Type           string       `json:"type"`
	Pattern        string       `json:"pattern,omitempty"`
	Streams        []linkJSON   `json:"streams"`
	Webhook        *webhookJSON `json:"webhook,omitempty"`
	WakeStream     string       `json:"wake_stream,omitempty"`
	LeaseTTLMs     int64        `json:"lease_ttl_ms"`
	CreatedAt      string       `json:"created_at"`
	Status         string       `json:"status"`
	Description    string       `json:"description,omitempty"`
}

type webhookJSON struct {
	URL     string       `json:"url"`
	Signing *signingJSON `json:"signing,omitempty"`
}

type signingJSON struct {
	Alg     string `json:"alg"`
	Kid     string `json:"kid"`
	JWKSURL string `json:"jwks_url"`
}

func subscriptionJSON(sub ports.Subscription) subscriptionView {
	v := subscriptionView{ID: sub.ID, SubscriptionID: sub.ID, Type: string(sub.Type), Pattern: sub.Pattern,
		Streams: make([]linkJSON, 0, len(sub.Streams)), WakeStream: sub.WakeStream, LeaseTTLMs: sub.LeaseTTL.Milliseconds(),
		CreatedAt: time.UnixMilli(sub.CreatedMs).UTC().Format("2006-01-02T15:04:05.000Z"), Status: "active",
		Description: sub.Description}
	if sub.Failed {
		v.Status = "failed"
	}
	for _, ls := range sub.Streams {
		v.Streams = append(v.Streams, linkJSON{Path: ls.Path, LinkType: linkType(ls), AckedOffset: formatOffset(ls.Acked)})
	}
	if sub.Type == ports.WebhookSubscription {
		v.Webhook = &webhookJSON{URL: sub.WebhookURL}
		if g := sub.Signing; g != nil {
			v.Webhook.Signing = &signingJSON{Alg: g.Alg, Kid: g.KeyID, JWKSURL: g.JWKSURL}
		}
	}
	return v
}

func linkType(ls ports.LinkedStream) string {
	if ls.Explicit {
		return "explicit"
	}
	return "glob"
}
