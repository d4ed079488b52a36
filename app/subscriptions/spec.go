package subscriptions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/picomq/pico/ports"
)

const (
	defaultLeaseTTL = 30 * time.Second
	minLeaseTTL     = time.Second
	maxLeaseTTL     = 10 * time.Minute
	maxIDBytes      = 256
	maxPathBytes    = 1024
	maxStreams      = 1000 // explicit streams in one request
	maxTextBytes    = 4096 // description, URLs
)

// reservedSegment starts the control routes under a stream root: no
// application stream is named under it.
const reservedSegment = "__ds"

// checkRef validates a subscription's name.
func checkRef(ref ports.SubscriptionRef) error {
	switch {
	case ref.ID == "" || len(ref.ID) > maxIDBytes:
		return invalid("subscription id must be 1 to %d bytes", maxIDBytes)
	case strings.ContainsAny(ref.ID, "/\x00"):
		return invalid("subscription id must not contain / or NUL")
	case !strings.HasSuffix(ref.Root, "/"):
		return invalid("stream root must end with /")
	case len(recordKey(ref)) > 1024:
		return invalid("stream root and id are too long")
	}
	return nil
}

// normalizePath trims the slashes around a root-relative path.
func normalizePath(p string) string { return strings.Trim(p, "/") }

func checkPath(what, p string) error {
	switch {
	case p == "":
		return invalid("%s must not be empty", what)
	case len(p) > maxPathBytes:
		return invalid("%s is longer than %d bytes", what, maxPathBytes)
	case p == reservedSegment || strings.HasPrefix(p, reservedSegment+"/"):
		return invalid("%s must not be under the reserved %s/", what, reservedSegment)
	}
	return nil
}

// normalizeSpec checks a create's configuration and returns it with paths
// trimmed, explicit streams sorted and deduplicated, and the default lease.
func (s *Service) normalizeSpec(spec ports.SubscriptionSpec) (ports.SubscriptionSpec, error) {
	spec.Pattern = normalizePath(spec.Pattern)
	spec.WakeStream = normalizePath(spec.WakeStream)
	if spec.LeaseTTL == 0 {
		spec.LeaseTTL = defaultLeaseTTL
	}
	streams, err := normalizePaths(spec.Streams)
	if err != nil {
		return spec, err
	}
	spec.Streams = streams
	if err := s.checkSpec(spec); err != nil {
		return spec, err
	}
	return spec, nil
}

func normalizePaths(paths []string) ([]string, error) {
	if len(paths) > maxStreams {
		return nil, invalid("at most %d streams per request", maxStreams)
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		p = normalizePath(p)
		if err := checkPath("stream path", p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (s *Service) checkSpec(spec ports.SubscriptionSpec) error {
	switch {
	case spec.Pattern == "" && len(spec.Streams) == 0:
		return invalid("pattern or streams is required")
	case spec.LeaseTTL < minLeaseTTL || spec.LeaseTTL > maxLeaseTTL || spec.LeaseTTL%time.Millisecond != 0:
		return invalid("lease_ttl_ms must be a whole number from %d to %d", minLeaseTTL.Milliseconds(), maxLeaseTTL.Milliseconds())
	case len(spec.Description) > maxTextBytes || len(spec.WebhookURL) > maxTextBytes || len(spec.ControlURL) > maxTextBytes:
		return invalid("description and URLs are limited to %d bytes", maxTextBytes)
	}
	if spec.Pattern != "" {
		if err := checkPath("pattern", spec.Pattern); err != nil {
			return err
		}
	}
	switch spec.Type {
	case ports.WebhookSubscription:
		return s.checkWebhook(spec)
	case ports.PullWakeSubscription:
		if spec.WakeStream == "" {
			return invalid("pull-wake subscriptions require wake_stream")
		}
		return checkPath("wake_stream", spec.WakeStream)
	}
	return invalid(`type must be "webhook" or "pull-wake"`)
}

func (s *Service) checkWebhook(spec ports.SubscriptionSpec) error {
	switch {
	case spec.WebhookURL == "":
		return invalid("webhook subscriptions require webhook.url")
	case s.cfg.Webhooks == nil:
		return invalid("webhook subscriptions are not enabled on this server")
	case spec.ControlURL == "":
		return invalid("webhook subscriptions need the server's control URL")
	}
	return s.cfg.Webhooks.Policy().Check(spec.WebhookURL)
}

// configHash identifies a normalised configuration: a create with an equal
// one is a confirmation, any other a conflict.
func configHash(spec ports.SubscriptionSpec) string {
	canonical, _ := json.Marshal(struct {
		Type        ports.SubscriptionType `json:"type"`
		Pattern     string                 `json:"pattern"`
		Streams     []string               `json:"streams"`
		WebhookURL  string                 `json:"webhook_url"`
		WakeStream  string                 `json:"wake_stream"`
		LeaseTTLMs  int64                  `json:"lease_ttl_ms"`
		Description string                 `json:"description"`
	}{spec.Type, spec.Pattern, spec.Streams, spec.WebhookURL, spec.WakeStream, spec.LeaseTTL.Milliseconds(), spec.Description})
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}
