package ports

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// WebhookRequest is one delivery: a POST of Body with Headers to URL.
type WebhookRequest struct {
	URL     string
	Headers map[string]string
	Body    []byte
}

// WebhookResponse is the receiver's answer. Body is cut at the sender's
// bound (a receiver cannot make the server buffer much).
type WebhookResponse struct {
	Status int
	Body   []byte
}

// WebhookSender delivers webhooks, so the app does no HTTP itself. An error
// means no answer arrived (connection refused, timeout, a refused address);
// any status is an answer. A sender refuses URLs its Policy refuses, and
// connects to no address it does not allow.
type WebhookSender interface {
	Send(ctx context.Context, req WebhookRequest) (WebhookResponse, error)
	// Policy is the address policy the sender applies, by which a
	// subscription's URL is judged when it is created.
	Policy() WebhookPolicy
}

// WebhookPolicy is the webhook address policy: https to a public host,
// and plain http to the development hosts localhost and 127.0.0.x only if
// AllowLoopback (otherwise a subscription could make the node post to its
// own admin listener or any local service). Private (RFC 1918, unique
// local), loopback, link-local, shared (RFC 6598) and cloud metadata
// addresses are refused, as are hosts that are numbers in disguise.
type WebhookPolicy struct {
	AllowLoopback bool
}

// Check judges a webhook URL; the error wraps ErrWebhookURLRejected.
func (p WebhookPolicy) Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Hostname() == "" {
		return rejectWebhook("webhook.url must be an absolute URL with a host")
	}
	if u.User != nil {
		return rejectWebhook("webhook.url must not carry credentials")
	}
	host := strings.ToLower(u.Hostname())
	switch u.Scheme {
	case "http":
		switch {
		case !IsDevWebhookHost(host):
			return rejectWebhook("http webhook URLs are only allowed for localhost or 127.0.0.x; use https")
		case !p.AllowLoopback:
			return rejectWebhook("webhooks to localhost or 127.0.0.x are off on this server (an operator may allow them for development)")
		}
		return nil
	case "https":
		return checkPublicHost(host)
	}
	return rejectWebhook("webhook.url must use https")
}

// ReachesLoopback reports whether the policy lets a webhook to host
// connect to a loopback address: host is a development host and the
// policy allows them.
func (p WebhookPolicy) ReachesLoopback(host string) bool {
	return p.AllowLoopback && IsDevWebhookHost(host)
}

// IsDevWebhookHost reports whether host is a development host: localhost
// or 127.0.0.x.
func IsDevWebhookHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && devPrefix.Contains(a)
}

var devPrefix = netip.MustParsePrefix("127.0.0.0/24")

func checkPublicHost(host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if !IsPublicAddress(a) {
			return rejectWebhook("webhook.url must not target a private, loopback, link-local or metadata address")
		}
		return nil
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := labels[len(labels)-1]
	switch {
	case slices.Contains(internalNames, host):
		return rejectWebhook("webhook.url must not target a metadata or local host")
	case slices.Contains(internalSuffixes, last):
		return rejectWebhook("webhook.url must not target a local or internal domain")
	case last == "" || last[0] >= '0' && last[0] <= '9':
		// No top-level domain starts with a digit: this is an address
		// spelled as a number ("2130706433", "127.1", "0x7f.1").
		return rejectWebhook("webhook.url host is not a valid public name")
	}
	return nil
}

var (
	internalNames    = []string{"localhost", "metadata", "metadata.google.internal", "metadata.goog", "instance-data"}
	internalSuffixes = []string{"localhost", "local", "internal", "localdomain", "home", "lan", "intranet", "corp"}
)

// IsPublicAddress reports whether a webhook may connect to a: a global
// unicast address outside the private, shared and special-purpose ranges.
func IsPublicAddress(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// nonPublic are special-purpose ranges IsGlobalUnicast lets through.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // shared address space; some cloud metadata services
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64: embeds any IPv4 address
	netip.MustParsePrefix("2002::/16"),    // 6to4: likewise
}

func rejectWebhook(msg string) error {
	return &SubscriptionError{Kind: ErrWebhookURLRejected, Message: msg}
}
